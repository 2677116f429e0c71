"""A framework's data and a pack's rows, loaded and validated in one pass: schemas, conditions,
row families and version ranges."""
