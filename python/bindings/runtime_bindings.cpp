// `pypto._core.runtime`: memory shared with the simulated device. The run itself is a driver
// session (driver_bindings.cpp).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <memory>

#include "bindings.h"
#include "pypto/runtime/device.h"
#include "pypto/runtime/errors.h"
#include "pypto/runtime/shared_memory.h"

namespace nb = nanobind;

namespace pypto::bindings {

namespace {

using ByteArray = nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>;

}  // namespace

void bind_runtime(nb::module_ m) {
  m.def(
      "shared_bytes",
      [](size_t nbytes) {
        std::unique_ptr<runtime::SharedBuffer> buffer;
        try {
          buffer = runtime::SharedBuffer::allocate(nbytes);
        } catch (const runtime::ExecutionError& e) {
          PyErr_SetString(PyExc_MemoryError, e.what());
          throw nb::python_error();
        }
        uint8_t* data = buffer->data();
        nb::capsule owner(buffer.release(),
                          [](void* p) noexcept { delete static_cast<runtime::SharedBuffer*>(p); });
        return ByteArray(data, {nbytes}, owner);
      },
      nb::arg("nbytes"),
      "A zeroed uint8 array in memory shared with isolated runs: tensors placed in it reach the "
      "device without being copied.");
  m.def(
      "shutdown",
      [] {
        nb::gil_scoped_release released;  // joining threads, reaping processes
        runtime::shutdown_devices();
      },
      "Ends the device servers of isolated runs and the simulated cores kept for runs in this "
      "process; the next run starts them again. Idempotent.");
}

}  // namespace pypto::bindings
