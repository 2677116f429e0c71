#include <c10/core/Allocator.h>

namespace toy {

struct ToyAllocator final : public c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override;
};

static ToyAllocator allocator;
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &allocator);

}  // namespace toy
