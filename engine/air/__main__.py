from air.cli import main

main()
