#include "launch_status.hpp"

namespace flyrt::launch
{
namespace
{

thread_local std::string t_last_error;

} // namespace

const std::string& last_error()
{
    return t_last_error;
}

std::int32_t fail(std::string message, std::int32_t status)
{
    t_last_error = std::move(message);
    return status;
}

std::string format_report(const std::string& message, std::int32_t count, const std::int64_t* values)
{
    std::string text;
    std::int32_t next = 0;
    for (std::size_t i = 0; i < message.size(); ++i)
    {
        if (message[i] == '{' && i + 1 < message.size() && message[i + 1] == '}' && next < count)
        {
            text += std::to_string(values[next++]);
            ++i;
        }
        else
        {
            text += message[i];
        }
    }
    return text;
}

std::string dim3_text(const std::uint32_t* sizes)
{
    return "(" + std::to_string(static_cast<std::int32_t>(sizes[0])) + ", " +
           std::to_string(static_cast<std::int32_t>(sizes[1])) + ", " +
           std::to_string(static_cast<std::int32_t>(sizes[2])) + ")";
}

} // namespace flyrt::launch
