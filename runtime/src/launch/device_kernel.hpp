// A kernel loaded on a GPU, whichever driver loaded it. Generated host code
// launches it through flyrt_device_launch (codegen/gpu/device_launch.hpp) with
// the table of kernels its artifact loaded.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../codegen/gpu/gpu_kernel.hpp"
#include "launch_status.hpp"

namespace flyrt::launch
{

// What a loaded kernel holds on its GPU, as the driver reports it.
struct kernel_resources
{
    std::string kernel;
    int device = 0;
    int registers = 0;           // per thread
    int static_shared_bytes = 0; // per block
    int local_bytes = 0;         // per thread (spills, local arrays)
    int constant_bytes = 0;
    std::string image_kind;        // what the driver was handed: "ptx", "cubin", "code object"
    std::int64_t image_bytes = 0;  // its size
    std::int64_t device_bytes = 0; // device memory the load took (the driver's free-memory delta)
};

// The error report a GPU kernel fills (codegen/gpu/gpu_kernel.hpp), as
// read back after a checked launch.
struct report_record
{
    std::int32_t taken = 0;
    std::int32_t which = 0;
    std::int64_t values[codegen::report_values] = {};
};

// The launch status a read record gives: 0 when nothing was reported, else
// status_reported with the message `messages[which]` names.
std::int32_t report_status(const report_record& record,
                           const std::string& kernel,
                           const std::vector<std::string>& messages);

// How waiting for a checked launch's stream ended.
struct stream_wait
{
    bool interrupted = false; // Ctrl-C came first; the kernel goes on on the GPU
    std::string error;        // the driver's error; empty when the kernel ended well
};

// What every driver does after a checked launch of `kernel`: waits for it
// (`wait_stream`, while other Python threads run and Ctrl-C is seen), copies
// its `report_bytes` report record back (`copy_back`: empty, or the driver's
// error), zeroes the device's record after a report (`clear`), and returns
// the launch's status (report_status), or a failure with last_error() set.
std::int32_t read_report(const std::string& kernel,
                         const std::vector<std::string>& messages,
                         std::size_t report_bytes,
                         const std::function<stream_wait()>& wait_stream,
                         const std::function<std::string(report_record&)>& copy_back,
                         const std::function<void()>& clear);

class device_kernel
{
public:
    virtual ~device_kernel() = default;

    // Enqueues the kernel on `stream` (a driver handle, as an integer);
    // returns 0, or a status with last_error() set.
    virtual std::int32_t launch(const std::uint64_t* slots, const geometry& g, std::int64_t stream) = 0;

    virtual kernel_resources resources() const = 0;
};

// The stream of the launcher call on this thread, which launches without
// their own stream (`stream=None`) run on; set by the dispatcher per call.
void set_call_stream(std::int64_t stream);
std::int64_t call_stream();

} // namespace flyrt::launch

extern "C" std::int32_t flyrt_device_launch(flyrt::launch::device_kernel* kernel,
                                            const std::uint64_t* slots,
                                            const flyrt::launch::geometry* g,
                                            std::int64_t stream);
