#include "flyrt/uniformity.hpp"

namespace flyrt::ir
{
namespace
{

bool scan_sync(const op& o, std::unordered_map<const op*, bool>& memo)
{
    bool found = reached_together(o.code);
    for (const auto& r : o.regions)
    {
        for (const auto& inner : r->ops)
        {
            found = scan_sync(*inner, memo) || found;
        }
    }
    memo[&o] = found;
    return found;
}

const std::vector<value_id>& terminator_values(const region& r)
{
    static const std::vector<value_id> none;
    return r.ops.empty() ? none : r.ops.back()->operands;
}

} // namespace

uniformity::uniformity(const function& f) : m_varying(f.values.size(), false)
{
    for (const auto& o : f.body.ops)
    {
        m_any_sync = scan_sync(*o, m_sync) || m_any_sync;
    }
    while (visit(f.body))
    {
        // until nothing more becomes varying (loop-carried values feed back)
    }
}

bool uniformity::synchronizes(const op& o) const
{
    auto it = m_sync.find(&o);
    return it != m_sync.end() && it->second;
}

bool uniformity::mark(value_id id, bool varying)
{
    if (!varying || m_varying[static_cast<std::size_t>(id)])
    {
        return false;
    }
    m_varying[static_cast<std::size_t>(id)] = true;
    return true;
}

bool uniformity::any_varying(const std::vector<value_id>& ids) const
{
    for (value_id id : ids)
    {
        if (varying(id))
        {
            return true;
        }
    }
    return false;
}

bool uniformity::visit(const region& r)
{
    bool changed = false;
    for (const auto& holder : r.ops)
    {
        const op& o = *holder;
        for (const auto& sub : o.regions)
        {
            changed = visit(*sub) || changed;
        }
        switch (o.code)
        {
        case opcode::special:
            changed =
                mark(o.results[0], static_cast<special_register>(o.attr) == special_register::thread_idx) ||
                changed;
            break;
        case opcode::shuffle:
        case opcode::mma:
        case opcode::matrix_load:
        case opcode::atomic: // each thread sees the element as the others left it
            for (value_id result : o.results)
            {
                changed = mark(result, true) || changed;
            }
            break;
        case opcode::if_:
        {
            const bool divergent = varying(o.operands[0]);
            const auto& a = terminator_values(*o.regions[0]);
            const auto& b = terminator_values(*o.regions[1]);
            for (std::size_t i = 0; i < o.results.size(); ++i)
            {
                changed = mark(o.results[i], divergent || varying(a.at(i)) || varying(b.at(i))) || changed;
            }
            break;
        }
        case opcode::for_:
        {
            const region& body = *o.regions[0];
            const bool divergent = varying(o.operands[0]) || varying(o.operands[1]) || varying(o.operands[2]);
            changed = mark(body.arguments[0], divergent) || changed;
            const auto& yielded = terminator_values(body);
            for (std::size_t i = 0; i < o.results.size(); ++i)
            {
                const bool v = divergent || varying(o.operands[3 + i]) || varying(yielded.at(i));
                changed = mark(body.arguments[1 + i], v) || changed;
                changed = mark(o.results[i], v) || changed;
            }
            break;
        }
        case opcode::while_:
        {
            const region& before = *o.regions[0];
            const region& after = *o.regions[1];
            const auto& forwarded = terminator_values(before); // cond, values...
            const auto& yielded = terminator_values(after);
            const bool divergent = !forwarded.empty() && varying(forwarded[0]);
            for (std::size_t i = 0; i < o.results.size(); ++i)
            {
                const bool v = divergent || varying(o.operands[i]) || varying(yielded.at(i)) ||
                               varying(forwarded.at(i + 1));
                changed = mark(before.arguments[i], v) || changed;
                changed = mark(after.arguments[i], v) || changed;
                changed = mark(o.results[i], v) || changed;
            }
            break;
        }
        default:
            for (value_id result : o.results)
            {
                changed = mark(result, any_varying(o.operands)) || changed;
            }
            break;
        }
    }
    return changed;
}

} // namespace flyrt::ir
