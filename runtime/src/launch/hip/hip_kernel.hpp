// A kernel's code object loaded on one AMD GPU, and its launch:
// hipModuleLaunchKernel with the launcher's slots packed as the code
// object's metadata lays them out (kernel_arguments.hpp), on the stream the
// call names, asynchronously. A kernel that can report errors
// (FLYDSL_DEBUG_BOUNDS) is waited for and its report read. Resources come
// from the code object's metadata (jit/amdgpu_metadata.hpp).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "../../jit/code_bundle.hpp"
#include "../device_kernel.hpp"
#include "hip_driver.hpp"

namespace flyrt::launch::hip
{

class hip_kernel : public device_kernel
{
public:
    // Loads `image` on device `ordinal`; throws std::runtime_error saying
    // why HIP rejects it.
    hip_kernel(const jit::device_image& image, int ordinal);
    ~hip_kernel() override;

    hip_kernel(const hip_kernel&) = delete;
    hip_kernel& operator=(const hip_kernel&) = delete;

    std::int32_t launch(const std::uint64_t* slots, const geometry& g, std::int64_t stream) override;
    kernel_resources resources() const override { return m_resources; }

private:
    std::int32_t read_report(hipStream_t stream);
    std::uint32_t dynamic_shared_bytes(const geometry& g) const;

    std::string m_name;
    int m_device;
    hipModule_t m_module = nullptr;
    hipFunction_t m_function = nullptr;
    std::vector<jit::argument_place> m_arguments;
    std::array<std::int32_t, 3> m_known_block;
    std::vector<std::string> m_reports;
    hipDeviceptr_t m_report = nullptr; // the module's report record, if it reports
    std::size_t m_report_bytes = 0;
    kernel_resources m_resources;
};

} // namespace flyrt::launch::hip
