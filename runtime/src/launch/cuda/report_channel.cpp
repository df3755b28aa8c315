#include "report_channel.hpp"

#include <algorithm>
#include <cstring>

#include "../blocking.hpp"
#include "../device_kernel.hpp"

namespace flyrt::launch::cuda
{
namespace
{

std::mutex g_channels_mutex;
std::vector<std::weak_ptr<report_channel>> g_channels; // the live ones, for synchronize

std::string failed(const std::string& kernel, const char* what, CUresult result)
{
    return "kernel " + kernel + ": " + what + ": " + error_text(result);
}

} // namespace

report_channel::report_channel(std::string kernel,
                               int device,
                               CUdeviceptr record,
                               std::vector<std::string> messages)
    : m_kernel(std::move(kernel)), m_device(device), m_record(record), m_messages(std::move(messages))
{
    const driver_api& api = driver();
    if (const CUresult made = api.cuMemAllocHost(&m_host, sizeof(report_record)); made != CUDA_SUCCESS)
    {
        throw std::runtime_error(failed(m_kernel, "cannot allocate its report's host record", made));
    }
    std::memset(m_host, 0, sizeof(report_record));
    if (const CUresult made = api.cuEventCreate(&m_arrived, CU_EVENT_DISABLE_TIMING); made != CUDA_SUCCESS)
    {
        api.cuMemFreeHost(m_host);
        throw std::runtime_error(failed(m_kernel, "cannot create its report's event", made));
    }
}

std::shared_ptr<report_channel>
report_channel::open(std::string kernel, int device, CUdeviceptr record, std::vector<std::string> messages)
{
    auto channel = std::make_shared<report_channel>(std::move(kernel), device, record, std::move(messages));
    std::lock_guard<std::mutex> lock(g_channels_mutex);
    g_channels.erase(
        std::remove_if(g_channels.begin(), g_channels.end(), [](const auto& c) { return c.expired(); }),
        g_channels.end());
    g_channels.push_back(channel);
    return channel;
}

report_channel::~report_channel()
{
    const driver_api& api = driver();
    api.cuEventDestroy(m_arrived);
    api.cuMemFreeHost(m_host);
}

int report_channel::capturing(CUstream stream)
{
    int status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (const CUresult asked = driver().cuStreamIsCapturing(stream, &status); asked != CUDA_SUCCESS)
    {
        fail(failed(m_kernel, "cannot tell whether its stream is being captured", asked));
        return -1;
    }
    return status != CU_STREAM_CAPTURE_STATUS_NONE ? 1 : 0;
}

std::int32_t report_channel::launching(CUstream stream)
{
    const int captured = capturing(stream);
    if (captured < 0)
    {
        return status_failed;
    }
    m_capturing = captured > 0;
    return m_capturing ? 0 : take(false, true);
}

void report_channel::close()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_record = 0;
}

std::int32_t report_channel::sent(CUstream stream)
{
    const driver_api& api = driver();
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_capturing)
    {
        m_captured = true;
        return 0;
    }
    // One copy after another into the same host record, in stream order: a
    // later launch's copy holds the earlier ones' report too (the first stays).
    CUresult queued = api.cuMemcpyDtoHAsync(m_host, m_record, sizeof(report_record), stream);
    if (queued == CUDA_SUCCESS)
    {
        queued = api.cuEventRecord(m_arrived, stream);
    }
    if (queued != CUDA_SUCCESS)
    {
        return fail(failed(m_kernel, "cannot queue the copy of its report", queued));
    }
    m_pending = true;
    return 0;
}

std::int32_t report_channel::take(bool wait, bool earlier, bool (*interrupted)())
{
    const driver_api& api = driver();
    std::lock_guard<std::mutex> lock(m_mutex);
    report_record record;
    if (m_pending)
    {
        CUresult state = api.cuEventQuery(m_arrived);
        if (state == CUDA_ERROR_NOT_READY && wait)
        {
            blocking_section others_run;
            state = cuda::wait(m_arrived, interrupted);
            if (state == CUDA_ERROR_NOT_READY)
            {
                return fail("interrupted while kernel " + m_kernel + " ran (it goes on on the GPU)",
                            status_interrupted);
            }
        }
        if (state == CUDA_ERROR_NOT_READY)
        {
            return 0; // not back yet: a later call reads it
        }
        if (state != CUDA_SUCCESS)
        {
            return fail("kernel " + m_kernel + " failed: " + error_text(state));
        }
        std::memcpy(&record, m_host, sizeof record);
        m_pending = false;
    }
    if (m_record == 0)
    {
        return 0; // the kernel is gone, and what it reported with it
    }
    if (wait && m_captured && record.taken == 0)
    {
        if (const CUresult read = api.cuMemcpyDtoH(&record, m_record, sizeof record); read != CUDA_SUCCESS)
        {
            return fail(failed(m_kernel, "cannot read its error report", read));
        }
    }
    if (record.taken == 0)
    {
        return 0;
    }
    api.cuMemsetD8(m_record, 0, sizeof(report_record)); // said once
    std::memset(m_host, 0, sizeof(report_record));
    const std::int32_t status = report_status(record, m_kernel, m_messages);
    if (earlier && status == status_reported)
    {
        return fail("an earlier launch of kernel " + m_kernel + ": " + last_error(), status_reported);
    }
    return status;
}

std::int32_t report_channel::take_all(int device, bool (*interrupted)())
{
    std::vector<std::shared_ptr<report_channel>> channels; // alive while they are read, not locked
    {
        std::lock_guard<std::mutex> lock(g_channels_mutex);
        for (const auto& known : g_channels)
        {
            if (auto channel = known.lock(); channel != nullptr && channel->m_device == device)
            {
                channels.push_back(std::move(channel));
            }
        }
    }
    for (const auto& channel : channels)
    {
        if (const std::int32_t status = channel->take(true, false, interrupted); status != 0)
        {
            return status; // the rest are read by the next synchronize
        }
    }
    return 0;
}

} // namespace flyrt::launch::cuda
