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

std::string geometry_problem(const geometry& g,
                             const std::int32_t* known_block,
                             std::uint64_t max_threads,
                             std::uint64_t max_shared_bytes)
{
    std::uint64_t threads = 1;
    for (int d = 0; d < 3; ++d)
    {
        if (static_cast<std::int32_t>(g.grid[d]) < 0 || static_cast<std::int32_t>(g.block[d]) < 1)
        {
            return "launch with grid " + dim3_text(g.grid) + " and block " + dim3_text(g.block) +
                   ": grid sizes must be >= 0 and block sizes >= 1";
        }
        threads *= g.block[d];
    }
    if (known_block != nullptr && (static_cast<std::int32_t>(g.block[0]) != known_block[0] ||
                                   static_cast<std::int32_t>(g.block[1]) != known_block[1] ||
                                   static_cast<std::int32_t>(g.block[2]) != known_block[2]))
    {
        const std::uint32_t known[3] = {static_cast<std::uint32_t>(known_block[0]),
                                        static_cast<std::uint32_t>(known_block[1]),
                                        static_cast<std::uint32_t>(known_block[2])};
        return "the kernel was compiled for known_block_size=" + dim3_text(known) +
               " but is launched with block=" + dim3_text(g.block);
    }
    if (threads > max_threads)
    {
        return "a block of " + std::to_string(threads) + " threads exceeds the limit of " +
               std::to_string(max_threads);
    }
    const std::uint64_t shared = static_cast<std::uint64_t>(g.static_shared_bytes) + g.smem_bytes;
    if (shared > max_shared_bytes)
    {
        return "shared memory of " + std::to_string(g.static_shared_bytes) + " bytes (static) + " +
               std::to_string(g.smem_bytes) + " bytes (smem=) exceeds the " +
               std::to_string(max_shared_bytes) + " bytes a block has";
    }
    return {};
}

} // namespace flyrt::launch
