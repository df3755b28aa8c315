// Builds a function's IR op by op, as the Python tracer runs the kernel, in
// the module the trace builds.
//
// Structured ops are built in steps: create the op (its regions exist),
// enter a region, emit into it, terminate it, leave; results are added when
// the op is finished, once the traced branches agreed on their types.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flyrt/ir.hpp"

namespace flyrt::ir
{

class function_builder
{
public:
    // Creates the function in `m` with parameters of `parameter_types`.
    function_builder(module& m,
                     std::string name,
                     function_kind kind,
                     const std::vector<type>& parameter_types,
                     const std::vector<std::string>& parameter_names,
                     location loc);

    function& fn() { return *m_fn; }
    const std::vector<value_id>& parameters() const { return m_fn->parameters; }
    const type& type_of(value_id id) const { return m_fn->type_of(id); }

    value_id constant_int(const type& t, std::int64_t value, int line);
    value_id constant_float(const type& t, double value, int line);
    value_id special(special_register which, int dim, int line);
    value_id unary(arith kind, value_id x, int line);
    value_id binary(arith kind, value_id a, value_id b, int line);
    value_id compare(predicate p, value_id a, value_id b, int line);
    value_id select(value_id cond, value_id if_true, value_id if_false, int line);
    value_id fma(value_id a, value_id b, value_id c, int line);
    value_id cast(value_id x, const type& to, int line);
    // FP8 bytes `x` (u8, any lanes) decoded exactly as `format` to float type `to`.
    value_id decode_fp8(value_id x, const type& to, fp8_format format, int line);
    value_id bitcast(value_id x, const type& to, int line);
    value_id load(value_id ptr, value_id offset, int line);
    // `lanes` consecutive elements from ptr + offset, as one vector, from an
    // address the caller promises is a multiple of `align` bytes (0: of the element).
    value_id load_vector(value_id ptr, value_id offset, int lanes, int line, int align = 0);
    value_id extract(value_id vector, int lane, int line);
    value_id insert(value_id vector, value_id element, int lane, int line);
    value_id broadcast(value_id element, int lanes, int line);
    value_id reduce(arith kind, value_id vector, int line);
    void store(value_id ptr, value_id offset, value_id value, int line, int align = 0);
    void launch(const std::string& kernel,
                const std::vector<value_id>& geometry,
                const std::vector<value_id>& args,
                int line);
    void report(const std::string& message, const std::vector<value_id>& values, int line);
    void barrier(int line);
    value_id shuffle(value_id value, value_id source_thread, int line);
    // d = a . b + c over a warp's lanes' fragments (flyrt/matrix.py has the layout).
    // `fp8`: the format of FP8 fragments (a of 16 bytes, b of 8), else none.
    value_id mma(value_id a,
                 value_id b,
                 value_id c,
                 int line,
                 fp8_format fp8 = fp8_format::none,
                 mma_layout layout = mma_layout::warp);
    // ptr[offset] op= value, atomically; returns the element's value before.
    value_id
    atomic(atomic_op kind, value_id ptr, value_id offset, value_id value, memory_semantics sem, int line);
    // ptr[offset] = value if it equals `compare`, atomically; returns (old value, success).
    std::pair<value_id, value_id> atomic_cas(
        value_id ptr, value_id offset, value_id compare, value_id value, memory_semantics sem, int line);
    void fence(memory_semantics sem, int line);
    // `lanes` consecutive elements from src + src_offset to dst + dst_offset (shared) while the
    // thread goes on; both addresses promised to be multiples of `align` bytes. Where `fill`
    // (a bool) is false, zeros are written and src is not read.
    void async_copy(value_id dst,
                    value_id dst_offset,
                    value_id src,
                    value_id src_offset,
                    int lanes,
                    int align,
                    value_id fill,
                    int line);
    void async_commit(int line);
    // Waits until at most `pending` of the thread's committed groups are still in flight.
    void async_wait(int pending, int line);
    // Programmatic dependent launch (ir.hpp's grid_dependency): the thread waits for the grids
    // ahead of its own in the stream; this grid lets the one after it start.
    void wait_for_prior_grids(int line);
    void launch_dependents(int line);
    // A warp's `matrices` 8x8 matrices of 16-bit words from shared memory, each lane naming one
    // row (ir.hpp's matrix_load); `transposed`: each lane's share of their transposes.
    value_id matrix_load(value_id ptr, value_id offset, int matrices, bool transposed, int line);
    // Formatted output from a kernel thread: `format` has one C conversion per value.
    void print(const std::string& format, const std::vector<value_id>& values, int line);
    // A static shared-memory array of `bytes` for this kernel; returns its pointer.
    value_id shared(scalar element, std::int64_t bytes, int line);
    // The dynamic shared memory (`smem=` at launch), after the static arrays.
    value_id dynamic_shared(scalar element, int line);

    // Structured control flow; ops are referred to by the handle returned.
    using op_handle = op*;
    op_handle begin_if(value_id cond, int line);
    op_handle
    begin_for(value_id lower, value_id upper, value_id step, const std::vector<value_id>& inits, int line);
    op_handle begin_while(const std::vector<value_id>& inits, int line);
    const std::vector<value_id>& region_arguments(op_handle o, int region_index) const;
    void enter(op_handle o, int region_index);
    void leave();
    void yield(const std::vector<value_id>& values, int line);
    void condition(value_id cond, const std::vector<value_id>& values, int line);
    // Adds the op's results, typed like the values its first region yields.
    std::vector<value_id> finish(op_handle o);

    // Removes `o`, which must be the last op of the current region (a loop
    // traced again with wider carried types replaces its first attempt).
    void discard(op_handle o);
    // File that the next ops come from (helpers may live in other files).
    void set_file(const std::string& file) { m_file = file; }

    // Depth of open regions (0: the function body).
    std::size_t depth() const { return m_insertion.size() - 1; }

private:
    op& append(opcode code, std::vector<value_id> operands, int line);
    value_id result(op& o, const type& t);

    function* m_fn;
    std::vector<region*> m_insertion;
    std::string m_file;
};

// The module a trace builds, with the builders of its functions: they live
// as long as it (Python holds them by reference).
class module_builder
{
public:
    explicit module_builder(std::string name);

    // A new function; kernels may be compiled for a known block size (0:
    // any) and ask GPUs to hold `min_blocks_per_sm` blocks at once (0: any).
    function_builder& add_function(std::string name,
                                   function_kind kind,
                                   const std::vector<type>& parameter_types,
                                   const std::vector<std::string>& parameter_names,
                                   location loc,
                                   const std::array<std::int32_t, 3>& known_block_size,
                                   int min_blocks_per_sm);

    module& built() { return m_module; }
    const module& built() const { return m_module; }

private:
    module m_module;
    std::vector<std::unique_ptr<function_builder>> m_builders;
};

} // namespace flyrt::ir
