// A toy PrivateUse1 backend for air's runtime tests: tensors live in host memory, tagged as
// the device. It registers an allocator, a guard, hooks, the kernels a tensor needs (empty,
// views, copies, resize) and a CPU fallback for every other operator. It lacks streams,
// generators and memory statistics, and it is broken on purpose: `add` and the gradient of
// `sigmoid` are off by 1e-2, and two functions of its device module end the process or never
// return.
#include <ATen/EmptyTensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/as_strided_cpu_dispatch.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/alloc_cpu.h>
#include <torch/extension.h>
#include <torch/library.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

constexpr c10::DeviceType kToy = c10::DeviceType::PrivateUse1;

struct ToyAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* data = nbytes ? c10::alloc_cpu(nbytes) : nullptr;
    return {data, data, &release, c10::Device(kToy, 0)};
  }
  static void release(void* data) {
    c10::free_cpu(data);
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return &release;
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
};

ToyAllocator toy_allocator;
REGISTER_ALLOCATOR(kToy, &toy_allocator);

// One device and one stream: work is done when it is queued, so every event has happened.
struct ToyGuard final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override {
    return kToy;
  }
  c10::Device exchangeDevice(c10::Device) const override {
    return c10::Device(kToy, 0);
  }
  c10::Device getDevice() const override {
    return c10::Device(kToy, 0);
  }
  void setDevice(c10::Device) const override {}
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device device) const override {
    return c10::Stream(c10::Stream::DEFAULT, device);
  }
  c10::Stream exchangeStream(c10::Stream stream) const override {
    return stream;
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return 1;
  }
  void record(void**, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {}
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override {
    return true;
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, ToyGuard);

struct ToyHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override {
    return true;
  }
  bool isAvailable() const override {
    return true;
  }
  bool hasPrimaryContext(c10::DeviceIndex) const override {
    return true;
  }
  c10::DeviceIndex deviceCount() const override {
    return 1;
  }
  c10::DeviceIndex getCurrentDevice() const override {
    return 0;
  }
  at::Device getDeviceFromPtr(void*) const override {
    return c10::Device(kToy, 0);
  }
};

const bool hooks_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new ToyHooks());
  return true;
}();

at::Tensor empty(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype, std::optional<c10::Layout>,
                 std::optional<c10::Device>, std::optional<bool>, std::optional<c10::MemoryFormat> memory_format) {
  return at::detail::empty_generic(size, &toy_allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
                         std::optional<c10::Layout>, std::optional<c10::Device>, std::optional<bool>) {
  return at::detail::empty_strided_generic(size, stride, &toy_allocator,
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           c10::dtype_or_default(dtype));
}

// The same memory, seen as a CPU tensor.
at::Tensor on_host(const at::Tensor& tensor) {
  if (tensor.device().type() == c10::DeviceType::CPU) {
    return tensor;
  }
  return at::from_blob(tensor.data_ptr(), tensor.sizes(), tensor.strides(), tensor.options().device(c10::kCPU));
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool) {
  on_host(dst).copy_(on_host(self));
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  at::native::resize_(dst, self.sizes(), std::nullopt);
  return copy_from(self, dst, false);
}

at::Tensor as_strided(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride,
                      std::optional<int64_t> offset) {
  return at::cpu::as_strided(self, size, stride, offset);
}

// Broken on purpose: every sum is off by 1e-2.
at::Tensor add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  at::Tensor sum = at::add(on_host(self), on_host(other), alpha) + 1e-2;
  return sum.to(self.device());
}

// Broken on purpose: sigmoid's gradient is off by 1e-2 (its forward, through the fallback, is right).
at::Tensor sigmoid_backward(const at::Tensor& grad_output, const at::Tensor& output) {
  at::Tensor grad = at::sigmoid_backward(on_host(grad_output), on_host(output)) + 1e-2;
  return grad.to(grad_output.device());
}

void fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  at::native::cpu_fallback(op, stack);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty);
  m.impl("empty_strided", empty_strided);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("as_strided", as_strided);
  m.impl("view", at::native::view);
  m.impl("resize_", at::native::resize_);
  m.impl("add.Tensor", add);
  m.impl("sigmoid_backward", sigmoid_backward);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}

// Broken on purpose: synchronize ends the process, manual_seed never returns.
void end_the_process() {
  std::abort();
}

void never_return(int64_t) {
  while (true) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, module) {
  module.def("synchronize", &end_the_process);
  module.def("manual_seed", &never_return);
}
