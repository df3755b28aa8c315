#include "cpu_launch.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "block_cost.hpp"

namespace flyrt::launch
{
namespace
{

// The first error kernels reported during the current launch.
std::mutex g_report_mutex;
std::atomic<bool> g_reported{false};
std::string g_report;

// Below this many thread-iterations a launch runs on the caller's thread:
// waking the pool would cost more than the work; unless its blocks were
// measured to take longer than this in all (block_cost.hpp).
constexpr std::uint64_t inline_threshold = 1u << 15;
constexpr std::uint64_t pool_worthwhile_ns = 50'000;

// A block's shared memory: the kernel's static arrays, then `smem=`.
std::size_t shared_bytes(const geometry& g)
{
    return static_cast<std::size_t>(g.static_shared_bytes) + g.smem_bytes;
}

// Pieces per participant at most: enough for the load to balance. A piece
// starts at one block and doubles while it takes under `quick_piece`, so a
// piece of slow blocks is short (an interrupt is seen between two) and one of
// quick blocks costs nothing to take.
constexpr std::uint64_t pieces_per_participant = 32;
constexpr auto quick_piece = std::chrono::milliseconds(5);

// The launching thread's view of the interrupt check, asked at most every 50 ms.
class interrupt_poll
{
public:
    bool interrupted()
    {
        if (interrupt_check() == nullptr)
        {
            return false;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now < m_next)
        {
            return false;
        }
        m_next = now + std::chrono::milliseconds(50);
        return interrupt_check()();
    }

private:
    std::chrono::steady_clock::time_point m_next =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
};

// One launch's grid, handed out a piece at a time.
struct job
{
    blocks_function fn;
    const void* slots;
    const geometry* g;
    std::uint64_t blocks;
    std::uint64_t chunk; // the largest piece
    std::atomic<std::uint64_t> next{0};
    std::atomic<bool> cancelled{false};
};

// Runs pieces of `j` until none is left or it is cancelled; `poll` (the
// launching thread only) may cancel it.
void execute(job& j, interrupt_poll* poll = nullptr)
{
    std::vector<unsigned char> shared(shared_bytes(*j.g));
    std::uint64_t piece = 1;
    while (!j.cancelled.load(std::memory_order_relaxed))
    {
        if (poll != nullptr && poll->interrupted())
        {
            j.cancelled = true;
            return;
        }
        const std::uint64_t first = j.next.fetch_add(piece);
        if (first >= j.blocks)
        {
            return;
        }
        const auto start = std::chrono::steady_clock::now();
        j.fn(j.slots, j.g, first, std::min(first + piece, j.blocks), shared.data());
        if (piece < j.chunk && std::chrono::steady_clock::now() - start < quick_piece)
        {
            piece = std::min(piece * 2, j.chunk);
        }
    }
}

// One launch at a time is spread over the workers; the caller takes part.
class thread_pool
{
public:
    explicit thread_pool(unsigned workers) { resize(workers); }

    ~thread_pool() { stop(); }

    void resize(unsigned workers)
    {
        stop();
        m_stopping = false;
        for (unsigned i = 0; i < workers; ++i)
        {
            m_threads.emplace_back([this] { work(); });
        }
    }

    unsigned size() const { return static_cast<unsigned>(m_threads.size()); }

    // Runs the grid with the workers; false when an interrupt stopped it.
    bool run(blocks_function fn, const void* slots, const geometry* g, std::uint64_t blocks)
    {
        std::lock_guard<std::mutex> one_launch(m_launch_mutex);
        const unsigned participants = size() + 1;
        job j{fn,
              slots,
              g,
              blocks,
              std::max<std::uint64_t>(1, blocks / (participants * pieces_per_participant))};
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_job = &j;
            m_pending = size();
            ++m_generation;
        }
        m_wake.notify_all();
        interrupt_poll poll;
        execute(j, &poll);
        std::unique_lock<std::mutex> lock(m_mutex);
        while (!m_done.wait_for(lock, std::chrono::milliseconds(50), [&] { return m_pending == 0; }))
        {
            lock.unlock();
            if (!j.cancelled && poll.interrupted())
            {
                j.cancelled = true; // the workers finish the piece they run, then stop
            }
            lock.lock();
        }
        m_job = nullptr;
        return !j.cancelled;
    }

private:
    void work()
    {
        std::uint64_t seen = 0;
        for (;;)
        {
            job* j = nullptr;
            {
                std::unique_lock<std::mutex> lock(m_mutex);
                m_wake.wait(lock, [&] { return m_stopping || m_generation != seen; });
                if (m_stopping)
                {
                    return;
                }
                seen = m_generation;
                j = m_job;
            }
            execute(*j);
            std::lock_guard<std::mutex> lock(m_mutex);
            if (--m_pending == 0)
            {
                m_done.notify_one();
            }
        }
    }

    void stop()
    {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_stopping = true;
        }
        m_wake.notify_all();
        for (auto& t : m_threads)
        {
            t.join();
        }
        m_threads.clear();
    }

    std::mutex m_launch_mutex;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_done;
    std::vector<std::thread> m_threads;
    job* m_job = nullptr;
    unsigned m_pending = 0;
    std::uint64_t m_generation = 0;
    bool m_stopping = false;
};

unsigned default_workers()
{
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return cores - 1; // the caller is the last worker
}

thread_pool& pool()
{
    static thread_pool instance(default_workers());
    return instance;
}

} // namespace

void set_worker_count(unsigned count)
{
    pool().resize(count == 0 ? 0 : count - 1);
}

unsigned worker_count()
{
    return pool().size() + 1;
}

} // namespace flyrt::launch

extern "C" void flyrt_report_error(const char* message, std::int32_t count, const std::int64_t* values)
{
    using namespace flyrt::launch;
    if (g_reported.exchange(true))
    {
        return;
    }
    std::string text = format_report(message, count, values);
    std::lock_guard<std::mutex> lock(g_report_mutex);
    g_report = std::move(text);
}

extern "C" std::int32_t flyrt_cpu_launch(flyrt::launch::blocks_function fn,
                                         const void* slots,
                                         const flyrt::launch::geometry* g,
                                         const std::int32_t* known_block_size)
{
    using namespace flyrt::launch;
    static const launch_limits limits = cpu_limits();
    const std::string problem = geometry_problem(*g, known_block_size, limits);
    if (!problem.empty())
    {
        return fail(problem); // the limits GPUs have, so that kernels port
    }
    std::uint64_t blocks = 1;
    std::uint64_t threads = 1;
    for (int d = 0; d < 3; ++d)
    {
        blocks *= g->grid[d];
        threads *= g->block[d];
    }
    if (blocks == 0)
    {
        return 0;
    }
    g_reported = false;
    const void* kernel = reinterpret_cast<const void*>(fn);
    block_cost& cost = block_cost::of(kernel);
    // A kernel not timed yet goes to the pool (and is timed there): its first
    // launch follows a compile or a warm start, and may be heavy.
    const bool on_caller = blocks == 1 || pool().size() == 0 ||
                           (blocks * threads < inline_threshold && cost.known(kernel) &&
                            cost.expected_ns(kernel, blocks) < pool_worthwhile_ns);
    const bool timed = blocks > 1 && pool().size() > 0 && cost.sample(kernel);
    const auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    bool finished = true;
    if (on_caller && blocks * threads < inline_threshold)
    {
        // Little work: at once, keeping the GIL (releasing it, polling and
        // timing pieces would cost more than the launch).
        std::vector<unsigned char> shared(shared_bytes(*g));
        fn(slots, g, 0, blocks, shared.data());
    }
    else if (on_caller)
    {
        blocking_section others_run;
        job j{fn, slots, g, blocks, std::max<std::uint64_t>(1, blocks / pieces_per_participant)};
        interrupt_poll poll;
        execute(j, &poll);
        finished = !j.cancelled;
    }
    else
    {
        blocking_section others_run;
        finished = pool().run(fn, slots, g, blocks);
    }
    if (!finished)
    {
        return fail("interrupted", status_interrupted);
    }
    if (timed)
    {
        cost.record(
            kernel, blocks, on_caller ? 1 : pool().size() + 1, std::chrono::steady_clock::now() - start);
    }
    if (g_reported)
    {
        std::lock_guard<std::mutex> lock(g_report_mutex);
        return fail(g_report, status_reported);
    }
    return 0;
}
