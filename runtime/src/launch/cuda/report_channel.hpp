// A checked kernel's error report on its way back to the host, so that a
// checked launch neither waits for its kernel nor queues anything beside it:
// the kernel's reporting thread, as it ends, copies the report into pinned
// host memory the GPU can write (its mirror, codegen/gpu/gpu_kernel.hpp), and the host
// reads that memory: at the kernel's next launch (what an earlier launch
// reported, if it has by then) and at flyrt.synchronize(), after the wait.
// Launches in a CUDA graph capture and their replays report the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_driver.hpp"

namespace flyrt::launch::cuda
{

class report_channel
{
public:
    // The report record `record` of kernel `kernel` on device `device` (its
    // context current), with the messages its reports name; `mirror`, the
    // module global the kernel reads its mirror's address from (set here).
    // synchronize finds the channel while it lives.
    static std::shared_ptr<report_channel> open(std::string kernel,
                                                int device,
                                                CUdeviceptr record,
                                                CUdeviceptr mirror,
                                                std::vector<std::string> messages);
    report_channel(std::string kernel,
                   int device,
                   CUdeviceptr record,
                   CUdeviceptr mirror,
                   std::vector<std::string> messages);
    ~report_channel();

    report_channel(const report_channel&) = delete;
    report_channel& operator=(const report_channel&) = delete;

    // The kernel's module is unloaded: its record is gone (a synchronize
    // holding this channel reads nothing more of it).
    void close();

    // Before a launch on `stream`: what an earlier launch reported, if it has
    // by now (status_reported, last_error() saying so); left for later while
    // `stream` is being captured, where clearing the record would end the capture.
    std::int32_t launching(CUstream stream);

    // What has come back: 0, or status_reported with last_error() naming the
    // kernel and the access; the record then cleared for the next report.
    std::int32_t take() { return read(false); }

    // take() of every channel on `device`, up to the first that reports: its status.
    static std::int32_t take_all(int device);

private:
    // Whether the kernel has written its mirror (no lock: every call but one finds nothing).
    bool reported() const;
    std::int32_t read(bool earlier);

    std::string m_kernel;
    int m_device;
    CUdeviceptr m_record;
    std::vector<std::string> m_messages;
    void* m_mirror = nullptr; // pinned and mapped: the kernel writes its report here
    std::mutex m_mutex;       // launches on one thread, synchronize on another
};

} // namespace flyrt::launch::cuda
