// A checked kernel's error report on its way back to the host, so that a
// checked launch never waits for its kernel: after each launch, a copy of the
// kernel's report record into pinned host memory and an event, both queued on
// the launch's stream. The report is read once that event has happened: at
// the kernel's next launch, if it has by then, and at flyrt.synchronize(),
// which waits for it. A launch inside a CUDA graph capture queues nothing (a
// copy there would belong to the graph); the device record its replays fill
// is read at synchronize.
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
    // context current), with the messages its reports name; synchronize
    // finds it while it lives.
    static std::shared_ptr<report_channel>
    open(std::string kernel, int device, CUdeviceptr record, std::vector<std::string> messages);
    report_channel(std::string kernel, int device, CUdeviceptr record, std::vector<std::string> messages);
    ~report_channel();

    report_channel(const report_channel&) = delete;
    report_channel& operator=(const report_channel&) = delete;

    // Before a launch on `stream`: what an earlier launch reported, if it is
    // back (take(false, true)); nothing while `stream` is being captured.
    std::int32_t launching(CUstream stream);

    // After that launch: queues the copy back, or notes a capture. 0, or a
    // failure with last_error() set.
    std::int32_t sent(CUstream stream);

    // The kernel's module is unloaded: its record is gone (a synchronize
    // holding this channel reads nothing more of it).
    void close();

    // What has come back: 0, or status_reported with last_error() naming the
    // kernel and the access (`earlier`: found at a later launch, which says
    // so). `wait`: waits for the copy (`interrupted` may end the wait:
    // status_interrupted) and reads what graph replays left.
    std::int32_t take(bool wait, bool earlier, bool (*interrupted)() = nullptr);

    // take(wait) of every channel on `device` (with the GIL: a wait releases
    // it), up to the first that reports: its status.
    static std::int32_t take_all(int device, bool (*interrupted)());

private:
    // Whether `stream` is being captured into a CUDA graph (-1: the driver's error, last_error() set).
    int capturing(CUstream stream);

    std::string m_kernel;
    int m_device;
    CUdeviceptr m_record;
    std::vector<std::string> m_messages;
    void* m_host = nullptr; // pinned: where the copies land
    CUevent m_arrived = nullptr;
    bool m_pending = false;   // a copy queued and not read yet
    bool m_captured = false;  // launched in a graph capture: replays report in the device record
    bool m_capturing = false; // the launch between launching() and sent() is (the GIL keeps the two together)
    std::mutex m_mutex;       // launches on one thread, synchronize on another
};

} // namespace flyrt::launch::cuda
