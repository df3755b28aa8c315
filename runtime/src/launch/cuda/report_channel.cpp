#include "report_channel.hpp"

#include <algorithm>
#include <cstring>

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

report_channel::report_channel(
    std::string kernel, int device, CUdeviceptr record, CUdeviceptr mirror, std::vector<std::string> messages)
    : m_kernel(std::move(kernel)), m_device(device), m_record(record), m_messages(std::move(messages))
{
    const driver_api& api = driver();
    CUresult made = api.cuMemHostAlloc(
        &m_mirror, sizeof(report_record), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    if (made != CUDA_SUCCESS)
    {
        throw std::runtime_error(failed(m_kernel, "cannot allocate its report's host record", made));
    }
    std::memset(m_mirror, 0, sizeof(report_record));
    CUdeviceptr seen_by_gpu = 0;
    made = api.cuMemHostGetDevicePointer(&seen_by_gpu, m_mirror, 0);
    if (made == CUDA_SUCCESS)
    {
        made = api.cuMemcpyHtoD(mirror, &seen_by_gpu, sizeof seen_by_gpu);
    }
    if (made != CUDA_SUCCESS)
    {
        api.cuMemFreeHost(m_mirror);
        throw std::runtime_error(failed(m_kernel, "cannot give it its report's host record", made));
    }
}

std::shared_ptr<report_channel> report_channel::open(
    std::string kernel, int device, CUdeviceptr record, CUdeviceptr mirror, std::vector<std::string> messages)
{
    auto channel =
        std::make_shared<report_channel>(std::move(kernel), device, record, mirror, std::move(messages));
    std::lock_guard<std::mutex> lock(g_channels_mutex);
    g_channels.erase(
        std::remove_if(g_channels.begin(), g_channels.end(), [](const auto& c) { return c.expired(); }),
        g_channels.end());
    g_channels.push_back(channel);
    return channel;
}

report_channel::~report_channel()
{
    driver().cuMemFreeHost(m_mirror);
}

void report_channel::close()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_record = 0;
}

bool report_channel::reported() const
{
    // The kernel writes `taken` last, after a system-wide fence: once it is seen, the rest is there.
    return __atomic_load_n(&static_cast<const report_record*>(m_mirror)->taken, __ATOMIC_ACQUIRE) != 0;
}

std::int32_t report_channel::launching(CUstream stream)
{
    if (!reported())
    {
        return 0;
    }
    int capturing = 0;
    if (const CUresult asked = driver().cuStreamIsCapturing(stream, &capturing); asked != CUDA_SUCCESS)
    {
        return fail(failed(m_kernel, "cannot tell whether its stream is being captured", asked));
    }
    return capturing != 0 ? 0 : read(true);
}

std::int32_t report_channel::read(bool earlier)
{
    if (!reported())
    {
        return 0;
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    report_record record;
    std::memcpy(&record, m_mirror, sizeof record);
    if (record.taken == 0 || m_record == 0)
    {
        return 0; // read by another thread meanwhile, or the kernel is gone and what it reported with it
    }
    // Said once: the mirror cleared, then the device's claim, which lets the next report write the mirror.
    std::memset(m_mirror, 0, sizeof(report_record));
    if (const CUresult cleared = driver().cuMemsetD8(m_record, 0, sizeof(report_record));
        cleared != CUDA_SUCCESS)
    {
        return fail(failed(m_kernel, "cannot clear its error report", cleared));
    }
    const std::int32_t status = report_status(record, m_kernel, m_messages);
    if (earlier && status == status_reported)
    {
        return fail("an earlier launch of kernel " + m_kernel + ": " + last_error(), status_reported);
    }
    return status;
}

std::int32_t report_channel::take_all(int device)
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
        if (const std::int32_t status = channel->take(); status != 0)
        {
            return status; // the rest are read by the next synchronize
        }
    }
    return 0;
}

} // namespace flyrt::launch::cuda
