#include "kernel_output.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace flyrt::launch::kernel_output
{
namespace
{

std::mutex g_mutex;
std::string g_text;
std::atomic<bool> g_pending{false};

template <typename T> void append_formatted(std::string& out, const std::string& spec, T value)
{
    const int size = std::snprintf(nullptr, 0, spec.c_str(), value);
    if (size <= 0)
    {
        return;
    }
    const std::size_t start = out.size();
    out.resize(start + static_cast<std::size_t>(size) + 1);
    std::snprintf(&out[start], static_cast<std::size_t>(size) + 1, spec.c_str(), value);
    out.resize(start + static_cast<std::size_t>(size));
}

} // namespace

void append(const std::string& text)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    g_text += text;
    g_pending.store(true, std::memory_order_release);
}

void note_c_stdio()
{
    g_pending.store(true, std::memory_order_release);
}

bool pending()
{
    return g_pending.load(std::memory_order_relaxed);
}

std::string take()
{
    std::lock_guard<std::mutex> lock(g_mutex);
    g_pending.store(false, std::memory_order_relaxed);
    std::string text;
    text.swap(g_text);
    return text;
}

std::string format(const char* format, std::int32_t count, const std::int64_t* slots)
{
    std::string out;
    std::int32_t next = 0;
    for (const char* p = format; *p != '\0'; ++p)
    {
        if (*p != '%')
        {
            out += *p;
            continue;
        }
        if (p[1] == '%')
        {
            out += '%';
            ++p;
            continue;
        }
        // The front end wrote the format: flags, width, precision, length, conversion.
        const char* end = p + 1;
        while (*end != '\0' && std::strchr("diouxXcfFeEgGaA", *end) == nullptr)
        {
            ++end;
        }
        if (*end == '\0' || next >= count)
        {
            out.append(p);
            break;
        }
        const std::string spec(p, end + 1);
        const std::int64_t slot = slots[next++];
        if (std::strchr("fFeEgGaA", *end) != nullptr)
        {
            double value;
            std::memcpy(&value, &slot, sizeof value);
            append_formatted(out, spec, value);
        }
        else if (*end == 'c')
        {
            append_formatted(out, spec, static_cast<int>(slot));
        }
        else
        {
            append_formatted(out, spec, static_cast<long long>(slot));
        }
        p = end;
    }
    return out;
}

} // namespace flyrt::launch::kernel_output

extern "C" void flyrt_print(const char* format, std::int32_t count, const std::int64_t* slots)
{
    flyrt::launch::kernel_output::append(flyrt::launch::kernel_output::format(format, count, slots));
}
