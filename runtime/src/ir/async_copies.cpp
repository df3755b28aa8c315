#include "flyrt/async_copies.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "flyrt/verifier.hpp"

namespace flyrt::ir
{
namespace
{

// What may still be in flight into one shared array: the newest of its
// copies not known to be retired, as the count of groups committed after it
// (0: not committed yet). fx.async_wait(n) retires every copy with more than
// n groups after it, so the newest decides whether all of them have landed.
struct pending_copy
{
    int commits_after = 0;
    location copied_at;
};

// Arrays (by the shared pointer the trace indexes) -> their pending copy.
using flight = std::map<value_id, pending_copy>;

// Commits past this many are all alike: no wait keeps that many groups pending.
constexpr int enough_commits = 1 << 16;

// Either path may have been taken: the worse of each array's two states.
flight join(flight a, const flight& b)
{
    for (const auto& [array, copy] : b)
    {
        auto [it, inserted] = a.emplace(array, copy);
        if (!inserted && copy.commits_after < it->second.commits_after)
        {
            it->second = copy;
        }
    }
    return a;
}

bool same(const flight& a, const flight& b)
{
    return std::equal(a.begin(),
                      a.end(),
                      b.begin(),
                      b.end(),
                      [](const auto& x, const auto& y)
                      { return x.first == y.first && x.second.commits_after == y.second.commits_after; });
}

class checker
{
public:
    explicit checker(const function& f) : m_fn(f) {}

    void run() { walk(m_fn.body, {}); }

private:
    flight walk(const region& r, flight in)
    {
        for (const auto& o : r.ops)
        {
            in = step(*o, std::move(in));
        }
        return in;
    }

    flight step(const op& o, flight in)
    {
        switch (o.code)
        {
        case opcode::async_copy:
            in[o.operands[0]] = pending_copy{0, o.loc};
            return in;
        case opcode::async_commit:
            for (auto& [array, copy] : in)
            {
                copy.commits_after = std::min(copy.commits_after + 1, enough_commits);
            }
            return in;
        case opcode::async_wait:
            for (auto it = in.begin(); it != in.end();)
            {
                it = it->second.commits_after > o.int_value ? in.erase(it) : std::next(it);
            }
            return in;
        case opcode::load:
        case opcode::matrix_load:
        case opcode::store:
        case opcode::atomic:
            check_access(o, in);
            return in;
        case opcode::if_:
            return join(walk(*o.regions[0], in), walk(*o.regions[1], in));
        case opcode::for_:
            return loop(in, [&](const flight& head) { return walk(*o.regions[0], head); });
        case opcode::while_:
            // before runs at least once; each turn of after runs it again
            return walk(
                *o.regions[0],
                loop(in, [&](const flight& head) { return walk(*o.regions[1], walk(*o.regions[0], head)); }));
        default:
            return in;
        }
    }

    // The state at a loop's head, over every number of turns: joined until it
    // stops changing (it only gets worse, and there are finitely many states).
    template <class Body> flight loop(const flight& entry, Body body)
    {
        flight head = entry;
        for (;;)
        {
            flight next = join(entry, body(head));
            if (same(next, head))
            {
                return head;
            }
            head = std::move(next);
        }
    }

    void check_access(const op& o, const flight& in) const
    {
        const auto it = in.find(o.operands[0]);
        if (it == in.end())
        {
            return;
        }
        const pending_copy& copy = it->second;
        const std::string how = o.code == opcode::load || o.code == opcode::matrix_load ? "reads" : "writes";
        const std::string wait =
            copy.commits_after == 0
                ? "fx.async_commit() and then fx.async_wait(0)"
                : "fx.async_wait(" + std::to_string(copy.commits_after - 1) + ") or fewer pending";
        throw verify_error("in kernel " + m_fn.name + ": this " + how +
                               " a shared array before the async copy into it (line " +
                               std::to_string(copy.copied_at.line) + ") is known to have landed; it needs " +
                               wait + " first",
                           o.loc);
    }

    const function& m_fn;
};

} // namespace

void check_async_copies(const function& kernel)
{
    checker(kernel).run();
}

} // namespace flyrt::ir
