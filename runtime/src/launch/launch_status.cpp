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

launch_limits cpu_limits()
{
    constexpr std::uint64_t any = 0x7FFFFFFF;
    return {{any, any, any}, {1024, 1024, 1024}, 1024, 64 * 1024};
}

namespace
{

bool size_fits(std::uint32_t size, std::uint64_t limit)
{
    return size != size_beyond_32_bits && size <= limit;
}

// Why one dimension of a grid or block, which does not fit, cannot launch.
std::string size_problem(const char* what, int d, std::uint32_t size, std::uint64_t limit)
{
    const std::string named = std::string(what) + " size " + "xyz"[d];
    if (size == size_beyond_32_bits)
    {
        return named + " does not fit in 32 bits (a launch takes at most " + std::to_string(limit) + ")";
    }
    return named + " = " + std::to_string(size) + " exceeds the limit of " + std::to_string(limit);
}

} // namespace

std::string geometry_problem(const geometry& g, const std::int32_t* known_block, const launch_limits& limits)
{
    std::uint64_t threads = 1;
    for (int d = 0; d < 3; ++d)
    {
        if (g.grid[d] != size_beyond_32_bits && g.block[d] != size_beyond_32_bits &&
            (static_cast<std::int32_t>(g.grid[d]) < 0 || static_cast<std::int32_t>(g.block[d]) < 1))
        {
            return "launch with grid " + dim3_text(g.grid) + " and block " + dim3_text(g.block) +
                   ": grid sizes must be >= 0 and block sizes >= 1";
        }
        // Every launch asks: text is made only for a problem.
        if (!size_fits(g.grid[d], limits.grid[d]))
        {
            return size_problem("grid", d, g.grid[d], limits.grid[d]);
        }
        if (!size_fits(g.block[d], limits.block[d]))
        {
            return size_problem("block", d, g.block[d], limits.block[d]);
        }
        threads *= g.block[d];
    }
    if (g.smem_bytes == size_beyond_32_bits)
    {
        return "smem= does not fit in 32 bits";
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
    if (threads > limits.threads)
    {
        return "a block of " + std::to_string(threads) + " threads exceeds the limit of " +
               std::to_string(limits.threads);
    }
    const std::uint64_t shared = static_cast<std::uint64_t>(g.static_shared_bytes) + g.smem_bytes;
    if (shared > limits.shared_bytes)
    {
        return "shared memory of " + std::to_string(g.static_shared_bytes) + " bytes (static) + " +
               std::to_string(g.smem_bytes) + " bytes (smem=) exceeds the " +
               std::to_string(limits.shared_bytes) + " bytes a block has";
    }
    return {};
}

} // namespace flyrt::launch
