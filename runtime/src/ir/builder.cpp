#include "flyrt/builder.hpp"

#include <stdexcept>

namespace flyrt::ir
{

module_builder::module_builder(std::string name)
{
    m_module.name = std::move(name);
}

function_builder& module_builder::add_function(std::string name,
                                               function_kind kind,
                                               const std::vector<type>& parameter_types,
                                               const std::vector<std::string>& parameter_names,
                                               location loc,
                                               const std::array<std::int32_t, 3>& known_block_size,
                                               int min_blocks_per_sm)
{
    m_builders.push_back(std::make_unique<function_builder>(
        m_module, std::move(name), kind, parameter_types, parameter_names, std::move(loc)));
    function& f = m_builders.back()->fn();
    f.known_block_size = known_block_size;
    f.min_blocks_per_sm = min_blocks_per_sm;
    return *m_builders.back();
}

function_builder::function_builder(module& m,
                                   std::string name,
                                   function_kind kind,
                                   const std::vector<type>& parameter_types,
                                   const std::vector<std::string>& parameter_names,
                                   location loc)
{
    m.functions.push_back(std::make_unique<function>());
    m_fn = m.functions.back().get();
    m_fn->name = std::move(name);
    m_fn->kind = kind;
    m_fn->loc = std::move(loc);
    for (std::size_t i = 0; i < parameter_types.size(); ++i)
    {
        const std::string n = i < parameter_names.size() ? parameter_names[i] : std::string();
        m_fn->parameters.push_back(m_fn->new_value(parameter_types[i], n));
    }
    m_insertion.push_back(&m_fn->body);
    m_file = m_fn->loc.file;
}

op& function_builder::append(opcode code, std::vector<value_id> operands, int line)
{
    auto o = std::make_unique<op>();
    o->code = code;
    o->operands = std::move(operands);
    o->loc = location{m_file, line};
    region& r = *m_insertion.back();
    r.ops.push_back(std::move(o));
    return *r.ops.back();
}

value_id function_builder::result(op& o, const type& t)
{
    const value_id id = m_fn->new_value(t);
    o.results.push_back(id);
    return id;
}

value_id function_builder::constant_int(const type& t, std::int64_t value, int line)
{
    op& o = append(opcode::constant, {}, line);
    o.int_value = value;
    return result(o, t);
}

value_id function_builder::constant_float(const type& t, double value, int line)
{
    op& o = append(opcode::constant, {}, line);
    o.float_value = value;
    return result(o, t);
}

value_id function_builder::special(special_register which, int dim, int line)
{
    op& o = append(opcode::special, {}, line);
    o.attr = static_cast<int>(which);
    o.int_value = dim;
    return result(o, type{scalar::i32});
}

value_id function_builder::unary(arith kind, value_id x, int line)
{
    op& o = append(opcode::unary, {x}, line);
    o.attr = static_cast<int>(kind);
    return result(o, type_of(x));
}

value_id function_builder::binary(arith kind, value_id a, value_id b, int line)
{
    op& o = append(opcode::binary, {a, b}, line);
    o.attr = static_cast<int>(kind);
    return result(o, type_of(a));
}

value_id function_builder::compare(predicate p, value_id a, value_id b, int line)
{
    op& o = append(opcode::compare, {a, b}, line);
    o.attr = static_cast<int>(p);
    type t{scalar::i1};
    t.lanes = type_of(a).lanes;
    return result(o, t);
}

value_id function_builder::select(value_id cond, value_id if_true, value_id if_false, int line)
{
    op& o = append(opcode::select, {cond, if_true, if_false}, line);
    return result(o, type_of(if_true));
}

value_id function_builder::fma(value_id a, value_id b, value_id c, int line)
{
    op& o = append(opcode::fma, {a, b, c}, line);
    return result(o, type_of(a));
}

value_id function_builder::cast(value_id x, const type& to, int line)
{
    op& o = append(opcode::cast, {x}, line);
    return result(o, to);
}

value_id function_builder::decode_fp8(value_id x, const type& to, fp8_format format, int line)
{
    op& o = append(opcode::cast, {x}, line);
    o.attr = static_cast<int>(format);
    return result(o, to);
}

value_id function_builder::bitcast(value_id x, const type& to, int line)
{
    op& o = append(opcode::bitcast, {x}, line);
    return result(o, to);
}

value_id function_builder::load(value_id ptr, value_id offset, int line)
{
    op& o = append(opcode::load, {ptr, offset}, line);
    return result(o, type{type_of(ptr).pointee});
}

value_id function_builder::load_vector(value_id ptr, value_id offset, int lanes, int line, int align)
{
    op& o = append(opcode::load, {ptr, offset}, line);
    o.int_value = align;
    type t{type_of(ptr).pointee};
    t.lanes = static_cast<std::uint8_t>(lanes);
    return result(o, t);
}

value_id function_builder::extract(value_id vector, int lane, int line)
{
    op& o = append(opcode::extract, {vector}, line);
    o.int_value = lane;
    return result(o, type{type_of(vector).kind});
}

value_id function_builder::insert(value_id vector, value_id element, int lane, int line)
{
    op& o = append(opcode::insert, {vector, element}, line);
    o.int_value = lane;
    return result(o, type_of(vector));
}

value_id function_builder::broadcast(value_id element, int lanes, int line)
{
    op& o = append(opcode::broadcast, {element}, line);
    type t = type_of(element);
    t.lanes = static_cast<std::uint8_t>(lanes);
    return result(o, t);
}

value_id function_builder::reduce(arith kind, value_id vector, int line)
{
    op& o = append(opcode::reduce, {vector}, line);
    o.attr = static_cast<int>(kind);
    return result(o, type{type_of(vector).kind});
}

void function_builder::store(value_id ptr, value_id offset, value_id value, int line, int align)
{
    append(opcode::store, {ptr, offset, value}, line).int_value = align;
}

void function_builder::launch(const std::string& kernel,
                              const std::vector<value_id>& geometry,
                              const std::vector<value_id>& args,
                              int line)
{
    if (geometry.size() != launch_operands)
    {
        throw std::invalid_argument("a launch takes grid xyz, block xyz, smem and stream");
    }
    std::vector<value_id> operands = geometry;
    operands.insert(operands.end(), args.begin(), args.end());
    op& o = append(opcode::launch, std::move(operands), line);
    o.callee = kernel;
}

void function_builder::report(const std::string& message, const std::vector<value_id>& values, int line)
{
    op& o = append(opcode::report, values, line);
    o.callee = message;
}

void function_builder::print(const std::string& format, const std::vector<value_id>& values, int line)
{
    op& o = append(opcode::print, values, line);
    o.callee = format;
}

void function_builder::barrier(int line)
{
    append(opcode::barrier, {}, line);
}

value_id function_builder::shuffle(value_id value, value_id source_thread, int line)
{
    op& o = append(opcode::shuffle, {value, source_thread}, line);
    return result(o, type_of(value));
}

value_id
function_builder::mma(value_id a, value_id b, value_id c, int line, fp8_format fp8, mma_layout layout)
{
    op& o = append(opcode::mma, {a, b, c}, line);
    o.attr = static_cast<int>(fp8);
    o.int_value = static_cast<std::int64_t>(layout);
    return result(o, type_of(c));
}

value_id function_builder::atomic(
    atomic_op kind, value_id ptr, value_id offset, value_id value, memory_semantics sem, int line)
{
    op& o = append(opcode::atomic, {ptr, offset, value}, line);
    o.attr = static_cast<int>(kind);
    o.int_value = sem.packed();
    return result(o, type_of(value));
}

std::pair<value_id, value_id> function_builder::atomic_cas(
    value_id ptr, value_id offset, value_id compare, value_id value, memory_semantics sem, int line)
{
    op& o = append(opcode::atomic, {ptr, offset, compare, value}, line);
    o.attr = static_cast<int>(atomic_op::cas);
    o.int_value = sem.packed();
    const value_id old = result(o, type_of(value));
    return {old, result(o, type{scalar::i1})};
}

void function_builder::fence(memory_semantics sem, int line)
{
    append(opcode::fence, {}, line).int_value = sem.packed();
}

void function_builder::async_copy(value_id dst,
                                  value_id dst_offset,
                                  value_id src,
                                  value_id src_offset,
                                  int lanes,
                                  int align,
                                  value_id fill,
                                  int line)
{
    op& o = append(opcode::async_copy, {dst, dst_offset, src, src_offset, fill}, line);
    o.attr = lanes;
    o.int_value = align;
}

value_id function_builder::matrix_load(value_id ptr, value_id offset, int matrices, bool transposed, int line)
{
    op& o = append(opcode::matrix_load, {ptr, offset}, line);
    o.attr = matrices;
    o.int_value = transposed ? 1 : 0;
    type t{type_of(ptr).pointee};
    const int bits = bit_width(t.kind);
    t.lanes = static_cast<std::uint8_t>(bits == 8 || bits == 16 ? matrices * 32 / bits : 1); // else: refused
    return result(o, t);
}

void function_builder::wait_for_prior_grids(int line)
{
    append(opcode::grid_dependency, {}, line).int_value = 0;
}

void function_builder::launch_dependents(int line)
{
    append(opcode::grid_dependency, {}, line).int_value = 1;
}

void function_builder::async_commit(int line)
{
    append(opcode::async_commit, {}, line);
}

void function_builder::async_wait(int pending, int line)
{
    append(opcode::async_wait, {}, line).int_value = pending;
}

value_id function_builder::shared(scalar element, std::int64_t bytes, int line)
{
    constexpr std::int64_t alignment = 64; // whole cache lines: vector loads, no false sharing
    op& o = append(opcode::shared, {}, line);
    o.int_value = m_fn->static_shared_bytes;
    m_fn->static_shared_bytes += (bytes + alignment - 1) / alignment * alignment;
    return result(o, type{scalar::ptr, element, address_space::shared});
}

value_id function_builder::dynamic_shared(scalar element, int line)
{
    op& o = append(opcode::shared, {}, line);
    o.int_value = -1; // resolved at codegen: after every static array
    return result(o, type{scalar::ptr, element, address_space::shared});
}

function_builder::op_handle function_builder::begin_if(value_id cond, int line)
{
    op& o = append(opcode::if_, {cond}, line);
    o.regions.push_back(std::make_unique<region>());
    o.regions.push_back(std::make_unique<region>());
    return &o;
}

function_builder::op_handle function_builder::begin_for(
    value_id lower, value_id upper, value_id step, const std::vector<value_id>& inits, int line)
{
    std::vector<value_id> operands{lower, upper, step};
    operands.insert(operands.end(), inits.begin(), inits.end());
    op& o = append(opcode::for_, std::move(operands), line);
    auto body = std::make_unique<region>();
    body->arguments.push_back(m_fn->new_value(type_of(lower)));
    for (value_id init : inits)
    {
        body->arguments.push_back(m_fn->new_value(type_of(init)));
    }
    o.regions.push_back(std::move(body));
    return &o;
}

function_builder::op_handle function_builder::begin_while(const std::vector<value_id>& inits, int line)
{
    op& o = append(opcode::while_, inits, line);
    for (int i = 0; i < 2; ++i)
    {
        auto r = std::make_unique<region>();
        for (value_id init : inits)
        {
            r->arguments.push_back(m_fn->new_value(type_of(init)));
        }
        o.regions.push_back(std::move(r));
    }
    return &o;
}

const std::vector<value_id>& function_builder::region_arguments(op_handle o, int region_index) const
{
    return o->regions.at(static_cast<std::size_t>(region_index))->arguments;
}

void function_builder::enter(op_handle o, int region_index)
{
    m_insertion.push_back(o->regions.at(static_cast<std::size_t>(region_index)).get());
}

void function_builder::leave()
{
    if (m_insertion.size() <= 1)
    {
        throw std::logic_error("leave() without a matching enter()");
    }
    m_insertion.pop_back();
}

void function_builder::discard(op_handle o)
{
    region& r = *m_insertion.back();
    if (r.ops.empty() || r.ops.back().get() != o)
    {
        throw std::logic_error("discard(): the op is not the last one of the current region");
    }
    r.ops.pop_back();
}

void function_builder::yield(const std::vector<value_id>& values, int line)
{
    append(opcode::yield, values, line);
}

void function_builder::condition(value_id cond, const std::vector<value_id>& values, int line)
{
    std::vector<value_id> operands{cond};
    operands.insert(operands.end(), values.begin(), values.end());
    append(opcode::condition, std::move(operands), line);
}

std::vector<value_id> function_builder::finish(op_handle o)
{
    std::vector<value_id> results;
    if (o->code == opcode::for_ || o->code == opcode::while_)
    {
        const std::size_t first = o->code == opcode::for_ ? 3 : 0;
        for (std::size_t i = first; i < o->operands.size(); ++i)
        {
            results.push_back(result(*o, type_of(o->operands[i])));
        }
        return results;
    }
    const region& then_region = *o->regions.at(0);
    if (!then_region.ops.empty() && then_region.ops.back()->code == opcode::yield)
    {
        for (value_id v : then_region.ops.back()->operands)
        {
            results.push_back(result(*o, type_of(v)));
        }
    }
    return results;
}

} // namespace flyrt::ir
