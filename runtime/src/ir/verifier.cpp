#include "flyrt/verifier.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "flyrt/async_copies.hpp"
#include "flyrt/uniformity.hpp"

namespace flyrt::ir
{
namespace
{

class verifier
{
public:
    verifier(const module& m, const function& f) : m_module(m), m_fn(f) {}

    void run()
    {
        for (value_id p : m_fn.parameters)
        {
            define(p, m_fn.loc);
        }
        check_region(m_fn.body, nullptr);
    }

private:
    [[noreturn]] void fail(const std::string& message, const location& loc) const
    {
        throw verify_error("in " + std::string(m_fn.kind == function_kind::kernel ? "kernel " : "launcher ") +
                               m_fn.name + ": " + message,
                           loc);
    }

    void define(value_id id, const location& loc)
    {
        if (id < 0 || static_cast<std::size_t>(id) >= m_fn.values.size())
        {
            fail("result %" + std::to_string(id) + " is not a value of this function", loc);
        }
        if (m_defined[static_cast<std::size_t>(id)])
        {
            fail("value %" + std::to_string(id) + " is defined twice", loc);
        }
        m_defined[static_cast<std::size_t>(id)] = true;
        make_visible(id);
    }

    void make_visible(value_id id)
    {
        m_visible[static_cast<std::size_t>(id)] = true;
        m_in_scope.push_back(id);
    }

    const type& use(value_id id, const op& o) const
    {
        if (id < 0 || static_cast<std::size_t>(id) >= m_visible.size())
        {
            fail("operand %" + std::to_string(id) + " is not a value of this function", o.loc);
        }
        if (!m_visible[static_cast<std::size_t>(id)])
        {
            fail("value %" + std::to_string(id) + " (" + name_of(id) +
                     ") is used where it is not defined: a value computed inside a branch or loop "
                     "can only be used after it through the branch or loop's results",
                 o.loc);
        }
        return m_fn.type_of(id);
    }

    std::string name_of(value_id id) const
    {
        const std::string& n = m_fn.values.at(static_cast<std::size_t>(id)).name;
        return n.empty() ? "a temporary" : "'" + n + "'";
    }

    void expect_count(const op& o, std::size_t operands, std::size_t results) const
    {
        if (o.operands.size() != operands || o.results.size() != results)
        {
            fail("malformed op: wrong number of operands or results", o.loc);
        }
    }

    void same_types(const op& o, const type& a, const type& b, const char* what) const
    {
        if (a != b)
        {
            fail(std::string(what) + ": operand types differ (" + to_string(a) + " vs " + to_string(b) + ")",
                 o.loc);
        }
    }

    // Checks a region; `yield_types` are what its terminator must yield
    // (nullptr: the function body, which must not yield). Values defined in a
    // region, its arguments included, are visible until it ends.
    void check_region(const region& r, const std::vector<type>* yield_types, bool is_while_before = false)
    {
        const std::size_t scope = m_in_scope.size();
        define_region_args(r);
        for (std::size_t i = 0; i < r.ops.size(); ++i)
        {
            const op& o = *r.ops[i];
            const bool last = i + 1 == r.ops.size();
            if ((o.code == opcode::yield || o.code == opcode::condition) && !last)
            {
                fail("a region terminator must come last", o.loc);
            }
            check_op(o, yield_types, is_while_before);
        }
        if (yield_types != nullptr)
        {
            const opcode expected = is_while_before ? opcode::condition : opcode::yield;
            if (r.ops.empty() || r.ops.back()->code != expected)
            {
                fail("a structured region must end with its terminator", m_fn.loc);
            }
        }
        while (m_in_scope.size() > scope)
        {
            m_visible[static_cast<std::size_t>(m_in_scope.back())] = false;
            m_in_scope.pop_back();
        }
    }

    std::vector<type> types_of(const std::vector<value_id>& ids) const
    {
        std::vector<type> out;
        for (value_id id : ids)
        {
            out.push_back(m_fn.type_of(id));
        }
        return out;
    }

    void check_op(const op& o, const std::vector<type>* yield_types, bool is_while_before)
    {
        for (value_id id : o.operands)
        {
            use(id, o);
        }
        const bool kernel = m_fn.kind == function_kind::kernel;
        switch (o.code)
        {
        case opcode::constant:
            expect_count(o, 0, 1);
            break;
        case opcode::special:
            expect_count(o, 0, 1);
            if (!kernel)
            {
                fail("thread and block indices exist only inside a kernel", o.loc);
            }
            if (o.int_value < 0 || o.int_value > 2)
            {
                fail("dimension must be x, y or z", o.loc);
            }
            break;
        case opcode::unary:
            expect_count(o, 1, 1);
            same_types(o, m_fn.type_of(o.operands[0]), m_fn.type_of(o.results[0]), "unary op");
            break;
        case opcode::binary:
            expect_count(o, 2, 1);
            same_types(o, m_fn.type_of(o.operands[0]), m_fn.type_of(o.operands[1]), "binary op");
            same_types(o, m_fn.type_of(o.operands[0]), m_fn.type_of(o.results[0]), "binary op result");
            if (m_fn.type_of(o.operands[0]).kind == scalar::ptr)
            {
                fail("arithmetic on pointers is not allowed; index the tensor instead", o.loc);
            }
            break;
        case opcode::compare:
            expect_count(o, 2, 1);
            same_types(o, m_fn.type_of(o.operands[0]), m_fn.type_of(o.operands[1]), "comparison");
            if (m_fn.type_of(o.results[0]).kind != scalar::i1 ||
                m_fn.type_of(o.results[0]).lanes != m_fn.type_of(o.operands[0]).lanes)
            {
                fail("a comparison yields a boolean per lane", o.loc);
            }
            break;
        case opcode::select:
            expect_count(o, 3, 1);
            if (m_fn.type_of(o.operands[0]).kind != scalar::i1 ||
                (m_fn.type_of(o.operands[0]).lanes != 1 &&
                 m_fn.type_of(o.operands[0]).lanes != m_fn.type_of(o.operands[1]).lanes))
            {
                fail("select needs a boolean condition (one, or one per lane)", o.loc);
            }
            same_types(o, m_fn.type_of(o.operands[1]), m_fn.type_of(o.operands[2]), "select");
            break;
        case opcode::fma:
            expect_count(o, 3, 1);
            same_types(o, m_fn.type_of(o.operands[0]), m_fn.type_of(o.operands[1]), "fma");
            same_types(o, m_fn.type_of(o.operands[0]), m_fn.type_of(o.operands[2]), "fma");
            break;
        case opcode::cast:
            expect_count(o, 1, 1);
            if (m_fn.type_of(o.operands[0]).lanes != m_fn.type_of(o.results[0]).lanes)
            {
                fail("a conversion keeps the number of lanes", o.loc);
            }
            if (o.attr != 0 &&
                (m_fn.type_of(o.operands[0]).kind != scalar::u8 ||
                 !is_float(m_fn.type_of(o.results[0]).kind) || o.attr > static_cast<int>(fp8_format::e4m3fn)))
            {
                fail("FP8 decodes bytes to a float type", o.loc);
            }
            break;
        case opcode::extract:
        case opcode::insert:
        case opcode::broadcast:
        case opcode::reduce:
        {
            const type& v = m_fn.type_of(o.code == opcode::broadcast ? o.results[0] : o.operands[0]);
            if (v.lanes < 2 || v.lanes > 16)
            {
                fail("vectors have 2 to 16 lanes", o.loc);
            }
            if ((o.code == opcode::extract || o.code == opcode::insert) &&
                (o.int_value < 0 || o.int_value >= v.lanes))
            {
                fail("lane " + std::to_string(o.int_value) + " is outside a vector of " +
                         std::to_string(v.lanes),
                     o.loc);
            }
            if (o.code == opcode::insert && m_fn.type_of(o.operands[1]).kind != v.kind)
            {
                fail("inserting a " + to_string(m_fn.type_of(o.operands[1])) + " into " + to_string(v),
                     o.loc);
            }
            break;
        }
        case opcode::bitcast:
            expect_count(o, 1, 1);
            if (bit_width(m_fn.type_of(o.operands[0]).kind) * m_fn.type_of(o.operands[0]).lanes !=
                bit_width(m_fn.type_of(o.results[0]).kind) * m_fn.type_of(o.results[0]).lanes)
            {
                fail("bitcast needs types of the same width", o.loc);
            }
            break;
        case opcode::load:
        case opcode::store:
        {
            expect_count(o, o.code == opcode::load ? 2 : 3, o.code == opcode::load ? 1 : 0);
            const type& p = m_fn.type_of(o.operands[0]);
            if (p.kind != scalar::ptr || !is_integer(m_fn.type_of(o.operands[1]).kind))
            {
                fail("memory access needs a pointer and an integer offset", o.loc);
            }
            const type& value = m_fn.type_of(o.code == opcode::load ? o.results[0] : o.operands[2]);
            if (value.kind != p.pointee)
            {
                fail("stored or loaded " + to_string(value) + " through " + to_string(p), o.loc);
            }
            if (!kernel)
            {
                fail("a launcher cannot read or write tensor elements; do that in a kernel", o.loc);
            }
            break;
        }
        case opcode::if_:
        {
            if (o.operands.size() != 1 || o.regions.size() != 2 ||
                m_fn.type_of(o.operands[0]).kind != scalar::i1)
            {
                fail("an if needs one boolean condition and two regions", o.loc);
            }
            const auto results = types_of(o.results);
            check_region(*o.regions[0], &results);
            check_region(*o.regions[1], &results);
            break;
        }
        case opcode::for_:
        {
            if (o.operands.size() < 3 || o.regions.size() != 1)
            {
                fail("malformed for loop", o.loc);
            }
            const type& iv = m_fn.type_of(o.operands[0]);
            if (!is_integer(iv.kind) || iv != m_fn.type_of(o.operands[1]) ||
                iv != m_fn.type_of(o.operands[2]))
            {
                fail("loop bounds must be integers of one type", o.loc);
            }
            const region& body = *o.regions[0];
            const std::vector<value_id> inits(o.operands.begin() + 3, o.operands.end());
            if (body.arguments.size() != inits.size() + 1 || o.results.size() != inits.size())
            {
                fail("loop-carried values do not match", o.loc);
            }
            check_block_args(o, body, 1, inits);
            const auto carried = types_of(inits);
            check_region(body, &carried);
            break;
        }
        case opcode::while_:
        {
            if (o.regions.size() != 2 || o.results.size() != o.operands.size())
            {
                fail("malformed while loop", o.loc);
            }
            const auto carried = types_of(o.operands);
            for (const auto& sub : o.regions)
            {
                check_block_args(o, *sub, 0, o.operands);
            }
            check_region(*o.regions[0], &carried, true);
            check_region(*o.regions[1], &carried);
            break;
        }
        case opcode::yield:
        case opcode::condition:
        {
            if (yield_types == nullptr || (o.code == opcode::condition) != is_while_before)
            {
                fail("region terminator in the wrong place", o.loc);
            }
            std::vector<value_id> values = o.operands;
            if (o.code == opcode::condition)
            {
                if (values.empty() || m_fn.type_of(values[0]).kind != scalar::i1)
                {
                    fail("a while condition must be a boolean", o.loc);
                }
                values.erase(values.begin());
            }
            if (types_of(values) != *yield_types)
            {
                fail("values leaving a branch or loop body differ in number or type from those entering it",
                     o.loc);
            }
            break;
        }
        case opcode::launch:
            check_launch(o);
            break;
        case opcode::report:
            for (value_id v : o.operands)
            {
                if (m_fn.type_of(v).kind != scalar::i64)
                {
                    fail("reported values must be Int64", o.loc);
                }
            }
            if (!kernel)
            {
                fail("errors are reported from kernels", o.loc);
            }
            break;
        case opcode::barrier:
        case opcode::shuffle:
        case opcode::shared:
            if (!kernel)
            {
                fail("barriers, shuffles and shared memory exist only inside a kernel", o.loc);
            }
            if (o.code == opcode::shuffle &&
                (o.operands.size() != 2 || !is_integer(m_fn.type_of(o.operands[1]).kind)))
            {
                fail("a shuffle takes a value and a source thread index", o.loc);
            }
            break;
        case opcode::mma:
            check_mma(o, kernel);
            break;
        case opcode::matrix_load:
            check_matrix_load(o, kernel);
            break;
        case opcode::atomic:
            check_atomic(o, kernel);
            break;
        case opcode::fence:
            if (!kernel)
            {
                fail("a memory fence belongs in a kernel", o.loc);
            }
            break;
        case opcode::async_copy:
            check_async_copy(o, kernel);
            break;
        case opcode::grid_dependency:
            if (!kernel)
            {
                fail("fx.wait_for_prior_grids() and fx.launch_dependents() belong in a kernel", o.loc);
            }
            break;
        case opcode::async_commit:
        case opcode::async_wait:
            if (!kernel || o.int_value < 0)
            {
                fail("async copies are committed and waited for in a kernel", o.loc);
            }
            break;
        case opcode::print:
            for (value_id v : o.operands)
            {
                const type& t = m_fn.type_of(v);
                if ((t.kind != scalar::i64 && t.kind != scalar::f64) || t.lanes != 1)
                {
                    fail("printed values are Int64 or Float64 scalars", o.loc);
                }
            }
            if (!kernel)
            {
                fail("fx.printf prints from kernels (print() from the launcher)", o.loc);
            }
            break;
        case opcode::ret:
            break;
        }
        for (value_id id : o.results)
        {
            define(id, o.loc);
        }
    }

    void check_atomic(const op& o, bool kernel)
    {
        const bool cas = static_cast<atomic_op>(o.attr) == atomic_op::cas;
        expect_count(o, cas ? 4 : 3, cas ? 2 : 1);
        const type& p = m_fn.type_of(o.operands[0]);
        const type& value = m_fn.type_of(o.operands.back());
        if (p.kind != scalar::ptr || !is_integer(m_fn.type_of(o.operands[1]).kind) ||
            value.kind != p.pointee || value.lanes != 1 || (cas && m_fn.type_of(o.operands[2]) != value))
        {
            fail("an atomic takes a pointer, an integer offset and scalars of the element's type", o.loc);
        }
        const int bits = bit_width(value.kind);
        const bool integer = is_integer(value.kind) && (bits == 32 || bits == 64);
        const auto kind = static_cast<atomic_op>(o.attr);
        const bool float_ok = is_float(value.kind) && (kind == atomic_op::add || kind == atomic_op::sub ||
                                                       (kind == atomic_op::xchg && bits >= 32));
        if (!integer && !float_ok)
        {
            fail("no atomic of this kind on " + to_string(value), o.loc);
        }
        if (!kernel)
        {
            fail("atomics belong in a kernel", o.loc);
        }
    }

    void check_async_copy(const op& o, bool kernel)
    {
        expect_count(o, 5, 0);
        const type& dst = m_fn.type_of(o.operands[0]);
        const type& src = m_fn.type_of(o.operands[2]);
        if (dst.kind != scalar::ptr || dst.space != address_space::shared || src.kind != scalar::ptr ||
            src.space == address_space::shared || src.pointee != dst.pointee ||
            !is_integer(m_fn.type_of(o.operands[1]).kind) || !is_integer(m_fn.type_of(o.operands[3]).kind) ||
            m_fn.type_of(o.operands[4]).kind != scalar::i1)
        {
            fail("an async copy goes from a tensor to a shared array of its element type", o.loc);
        }
        const int bytes = o.attr * std::max(1, bit_width(dst.pointee) / 8);
        if (bytes != 4 && bytes != 8 && bytes != 16)
        {
            fail("an async copy moves 4, 8 or 16 bytes per thread, not " + std::to_string(bytes), o.loc);
        }
        if (!kernel)
        {
            fail("async copies belong in a kernel", o.loc);
        }
    }

    void check_block_args(const op& o,
                          const region& r,
                          std::size_t first,
                          const std::vector<value_id>& inits) const
    {
        for (std::size_t i = 0; i < inits.size(); ++i)
        {
            if (m_fn.type_of(r.arguments.at(first + i)) != m_fn.type_of(inits[i]))
            {
                fail("a loop-carried value changes type", o.loc);
            }
        }
    }

    void define_region_args(const region& r)
    {
        for (value_id id : r.arguments)
        {
            if (id < 0 || static_cast<std::size_t>(id) >= m_fn.values.size())
            {
                fail("region argument %" + std::to_string(id) + " is not a value of this function", m_fn.loc);
            }
            m_defined[static_cast<std::size_t>(id)] = true;
            make_visible(id);
        }
    }

    void check_mma(const op& o, bool kernel)
    {
        if (!kernel)
        {
            fail("fx.mma exists only inside a kernel", o.loc);
        }
        const type& a = m_fn.type_of(o.operands.at(0));
        const type& b = m_fn.type_of(o.operands.at(1));
        const type& c = m_fn.type_of(o.operands.at(2));
        const auto fp8 = static_cast<fp8_format>(o.attr);
        if (static_cast<mma_layout>(o.int_value) == mma_layout::wave)
        {
            if (fp8 != fp8_format::none || (a.kind != scalar::f16 && a.kind != scalar::bf16) ||
                a.lanes != 4 || b.kind != a.kind || b.lanes != 4 || c.kind != scalar::f32 || c.lanes != 4)
            {
                fail(
                    "fx.wave_mma takes a lane's fragments: a and b of 4 Float16 (or BFloat16) values, c of 4 "
                    "Float32; got " +
                        to_string(a) + ", " + to_string(b) + ", " + to_string(c),
                    o.loc);
            }
            return;
        }
        if (fp8 != fp8_format::none)
        {
            if (a.kind != scalar::u8 || a.lanes != 16 || b.kind != scalar::u8 || b.lanes != 8 ||
                c.kind != scalar::f32 || c.lanes != 4 || o.attr > static_cast<int>(fp8_format::e4m3fn))
            {
                fail("fx.mma of FP8 takes a lane's fragments: a of 16 and b of 8 FP8 values, c of 4 Float32; "
                     "got " +
                         to_string(a) + ", " + to_string(b) + ", " + to_string(c),
                     o.loc);
            }
            return;
        }
        if ((a.kind != scalar::f16 && a.kind != scalar::bf16) || a.lanes != 8 || b.kind != a.kind ||
            b.lanes != 4 || c.kind != scalar::f32 || c.lanes != 4)
        {
            fail("fx.mma takes a lane's fragments: a of 8 and b of 4 Float16 (or BFloat16) values, c of 4 "
                 "Float32; got " +
                     to_string(a) + ", " + to_string(b) + ", " + to_string(c),
                 o.loc);
        }
    }

    void check_matrix_load(const op& o, bool kernel)
    {
        expect_count(o, 2, 1);
        const type& p = m_fn.type_of(o.operands[0]);
        const int bits = bit_width(p.pointee);
        if (!kernel || p.kind != scalar::ptr || p.space != address_space::shared ||
            !is_integer(m_fn.type_of(o.operands[1]).kind))
        {
            fail("a matrix load reads a shared array, in a kernel", o.loc);
        }
        if ((o.attr != 1 && o.attr != 2 && o.attr != 4) || !(bits == 16 || (bits == 8 && o.int_value == 0)))
        {
            fail("a matrix load takes 1, 2 or 4 matrices of 16-bit words (of 16-bit or 8-bit elements, "
                 "transposed only 16-bit ones); got " +
                     std::to_string(o.attr) + " of " + to_string(p),
                 o.loc);
        }
    }

    void check_launch(const op& o)
    {
        if (m_fn.kind != function_kind::host)
        {
            fail("kernels can only be launched from a @flyc.jit launcher", o.loc);
        }
        const function* callee = m_module.find(o.callee);
        if (callee == nullptr || callee->kind != function_kind::kernel)
        {
            fail("launch of unknown kernel " + o.callee, o.loc);
        }
        constexpr std::size_t geometry = launch_operands;
        if (o.operands.size() != geometry + callee->parameters.size())
        {
            fail("kernel " + o.callee + " takes " + std::to_string(callee->parameters.size()) +
                     " native arguments, the launch passes " + std::to_string(o.operands.size() - geometry),
                 o.loc);
        }
        for (std::size_t i = 0; i + 1 < geometry; ++i)
        {
            if (m_fn.type_of(o.operands[i]).kind != scalar::i32)
            {
                fail("grid, block and smem sizes must be Int32", o.loc);
            }
        }
        if (m_fn.type_of(o.operands[geometry - 1]) != type{scalar::i64})
        {
            fail("a launch's stream must be an Int64 handle", o.loc);
        }
        for (std::size_t i = 0; i < callee->parameters.size(); ++i)
        {
            if (m_fn.type_of(o.operands[geometry + i]) != callee->type_of(callee->parameters[i]))
            {
                fail("argument " + std::to_string(i) + " of kernel " + o.callee + " has the wrong type",
                     o.loc);
            }
        }
    }

    const module& m_module;
    const function& m_fn;
    std::vector<bool> m_defined = std::vector<bool>(m_fn.values.size());
    std::vector<bool> m_visible = std::vector<bool>(m_fn.values.size());
    std::vector<value_id> m_in_scope; // visible values, in the order their regions close them
};

// Barriers and shuffles need every thread of the block: none may sit under
// control flow whose outcome depends on the thread.
class synchronization_check
{
public:
    synchronization_check(const function& f, const target& t) : m_fn(f), m_target(t), m_uniformity(f) {}

    void run() { visit(m_fn.body); }

private:
    bool divergent(const op& o) const
    {
        switch (o.code)
        {
        case opcode::if_:
            return m_uniformity.varying(o.operands[0]);
        case opcode::for_:
            return m_uniformity.varying(o.operands[0]) || m_uniformity.varying(o.operands[1]) ||
                   m_uniformity.varying(o.operands[2]);
        case opcode::while_:
        {
            const auto& before = o.regions[0]->ops;
            return !before.empty() && m_uniformity.varying(before.back()->operands.at(0));
        }
        default:
            return false;
        }
    }

    void visit(const region& r)
    {
        for (const auto& o : r.ops)
        {
            if (o->code == opcode::mma)
            {
                check_mma_target(*o);
            }
            if (o->code == opcode::matrix_load && m_target.kind != target_kind::nvptx)
            {
                throw verify_error("a matrix load (ldmatrix) exists on NVIDIA GPUs only; this target is " +
                                       m_target.name(),
                                   o->loc);
            }
            if (reached_together(o->code) && m_divergent != nullptr)
            {
                const char* what = o->code == opcode::barrier   ? "fx.barrier()"
                                   : o->code == opcode::shuffle ? "a warp shuffle"
                                   : o->code == opcode::mma     ? "fx.mma"
                                                                : "a fragment load from shared memory";
                throw verify_error(
                    std::string(what) + " in kernel " + m_fn.name +
                        " sits under control flow that depends on the thread (the branch or loop "
                        "at line " +
                        std::to_string(m_divergent->loc.line) + "): every thread of the block must reach it",
                    o->loc);
            }
            if (o->code == opcode::while_ && !m_target.sync_in_while && m_uniformity.synchronizes(*o))
            {
                throw verify_error("a barrier or shuffle inside a while loop (kernel " + m_fn.name +
                                       ") is not supported by the " + m_target.name() +
                                       " target yet; use a for loop over range()",
                                   o->loc);
            }
            const op* saved = m_divergent;
            if (m_divergent == nullptr && m_uniformity.synchronizes(*o) && divergent(*o))
            {
                m_divergent = o.get();
            }
            for (const auto& sub : o->regions)
            {
                visit(*sub);
            }
            m_divergent = saved;
        }
    }

    void check_mma_target(const op& o) const
    {
        if (static_cast<mma_layout>(o.int_value) == mma_layout::wave)
        {
            check_wave_mma_target(o);
            return;
        }
        if (!m_target.matrix_multiply)
        {
            throw verify_error(
                "fx.mma needs an NVIDIA GPU of sm_80 or newer, or an AMD GPU with MFMA (gfx90a, "
                "gfx94x); this target is " +
                    m_target.cpu,
                o.loc);
        }
        // AMD's 64-lane waves run it as two warps of 32 (codegen/amdgpu)
        if (m_target.kind == target_kind::amdgpu)
        {
            check_whole_waves(o, "fx.mma on " + m_target.cpu, " (two warps of 32 each)");
        }
        else if (m_target.warp_size != 32)
        {
            throw verify_error("fx.mma needs warps of 32 lanes; the " + m_target.name() + " target's are " +
                                   std::to_string(m_target.warp_size) + " (fx.set_warp_size(32))",
                               o.loc);
        }
    }

    // MFMA's own layout: a wave of 64 lanes, whole (as fx.mma on AMD), on
    // an AMD GPU with MFMA or on the CPU run with waves of 64.
    void check_wave_mma_target(const op& o) const
    {
        if (m_target.warp_size != 64 || !m_target.matrix_multiply)
        {
            throw verify_error(
                "fx.wave_mma is AMD's MFMA layout, for a wave of 64 lanes: an AMD GPU with MFMA (gfx90a, "
                "gfx94x) or the CPU with fx.set_warp_size(64); this target is " +
                    m_target.name() + " (" + m_target.cpu + ") with " + std::to_string(m_target.warp_size) +
                    "-lane warps (NVIDIA's warps take fx.mma)",
                o.loc);
        }
        if (m_target.kind == target_kind::amdgpu)
        {
            check_whole_waves(o, "fx.wave_mma", "");
        }
    }

    // A product on AMD reads operands from every lane of its wave: lanes a
    // block leaves off would hold stale values, so the block must be whole
    // waves, known when the kernel is traced.
    void check_whole_waves(const op& o, const std::string& what, const std::string& aside) const
    {
        const std::int64_t threads =
            std::int64_t(m_fn.known_block_size[0]) * m_fn.known_block_size[1] * m_fn.known_block_size[2];
        if (threads <= 0 || threads % m_target.warp_size != 0)
        {
            throw verify_error(what + " needs blocks of whole " + std::to_string(m_target.warp_size) +
                                   "-lane waves" + aside + ", known when the kernel is traced: kernel " +
                                   m_fn.name + "'s block is " +
                                   (threads > 0 ? std::to_string(threads) + " threads"
                                                : std::string("not known (give launch() a constant block)")),
                               o.loc);
        }
    }

    const function& m_fn;
    const target& m_target;
    uniformity m_uniformity;
    const op* m_divergent = nullptr;
};

} // namespace

void verify(const module& m, const target& t)
{
    for (const auto& f : m.functions)
    {
        verifier(m, *f).run();
    }
    for (const auto& f : m.functions)
    {
        if (f->kind == function_kind::kernel)
        {
            synchronization_check(*f, t).run();
            check_async_copies(*f);
        }
    }
}

} // namespace flyrt::ir
