// A kernel's PTX loaded on one NVIDIA GPU (in its primary context), and its
// launch: cuLaunchKernel with the arguments straight from the launcher's
// slots, on the stream the call names, asynchronously. A kernel that can
// report errors (bounds checks) writes its report into host memory
// (report_channel.hpp): it is read at its next launch or at synchronize.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../../jit/code_bundle.hpp"
#include "../device_kernel.hpp"
#include "cuda_driver.hpp"
#include "report_channel.hpp"

namespace flyrt::launch::cuda
{

class cuda_kernel : public device_kernel
{
public:
    // Loads `image` on device `ordinal`; throws std::runtime_error with the
    // driver's log if the driver rejects it.
    cuda_kernel(const jit::device_image& image, int ordinal);
    ~cuda_kernel() override;

    cuda_kernel(const cuda_kernel&) = delete;
    cuda_kernel& operator=(const cuda_kernel&) = delete;

    std::int32_t launch(const std::uint64_t* slots, const geometry& g, std::int64_t stream) override;
    kernel_resources resources() const override { return m_resources; }

private:
    std::int32_t finish_printing(CUstream stream) const;
    CUresult start(const geometry& g, std::uint32_t shared, CUstream stream, void** arguments);

    std::string m_name;
    int m_device;
    CUcontext m_context = nullptr;
    CUmodule m_module = nullptr;
    CUfunction m_function = nullptr;
    std::size_t m_parameters;
    std::array<std::int32_t, 3> m_known_block;
    std::vector<std::string> m_reports;
    bool m_prints; // it calls printf: its launches are waited for, then C's stdout flushed
    // It waits for the kernels ahead of it itself (fx.wait_for_prior_grids): launched so that it may
    // start before they end.
    bool m_overlaps_prior;
    std::shared_ptr<report_channel> m_reported; // the module's report record's way back, if it reports
    int m_dynamic_shared_limit = 48 * 1024;     // what the function is allowed now
    launch_limits m_limits{};                   // what the device allows
    kernel_resources m_resources;
};

} // namespace flyrt::launch::cuda
