// flyrt's IR: a small, backend-neutral SSA IR with structured control flow.
//
// A module holds functions; a function owns its values and a body region;
// a region is a list of ops with block arguments; `if`, `for` and `while`
// ops own regions and end them with `yield` / `condition`, as in MLIR's scf
// dialect. Kernels are written per thread: launch geometry (thread and block
// indices), address spaces and launches are IR concepts, so each backend
// decides how threads map to hardware (the CPU backend runs them as loops).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace flyrt::ir
{

enum class scalar : std::uint8_t
{
    i1,
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    f16,
    bf16,
    f32,
    f64,
    ptr,
};

enum class address_space : std::uint8_t
{
    global = 0,
    shared = 3,
};

struct type
{
    scalar kind = scalar::i32;
    scalar pointee = scalar::i8; // element type, for kind == ptr
    address_space space = address_space::global;
    std::uint8_t lanes = 1; // > 1: a vector of `kind`

    bool operator==(const type& other) const
    {
        return kind == other.kind && lanes == other.lanes &&
               (kind != scalar::ptr || (pointee == other.pointee && space == other.space));
    }
    bool operator!=(const type& other) const { return !(*this == other); }
};

bool is_integer(scalar kind);
bool is_unsigned(scalar kind);
bool is_float(scalar kind);
int bit_width(scalar kind);
std::string to_string(scalar kind);
std::string to_string(const type& t);

// Where an op came from in the user's Python source.
struct location
{
    std::string file;
    int line = 0;
};

enum class opcode : std::uint8_t
{
    constant,     // int_value or float_value
    special,      // attr: special_register; int_value: dimension (0..2)
    unary,        // attr: arith
    binary,       // attr: arith
    compare,      // attr: predicate
    select,       // cond, if_true, if_false
    fma,          // a * b + c
    cast,         // value conversion to the result type; attr: fp8_format of FP8 bytes to decode
    bitcast,      // same width reinterpretation
    load,         // ptr, offset (elements) -> value; int_value: alignment promised (bytes, 0: the element's)
    store,        // ptr, offset, value; int_value: alignment, as for load
    if_,          // cond; regions: then, else
    for_,         // lower, upper, step, inits...; region: body(iv, iters...)
    while_,       // inits...; regions: before(iters...), after(iters...)
    yield,        // values flowing out of a region
    condition,    // cond, values...: ends a while's `before` region
    launch,       // callee; grid xyz, block xyz, smem, stream, args... (launch_operands first)
    report,       // values...; callee: message with {} for each value. Records
                  // the launch's first error (e.g. an out-of-bounds index)
    barrier,      // every thread of the block reaches it before any goes on
    shuffle,      // value, source thread (block-linear index) -> the value that thread holds
    shared,       // int_value: byte offset in the block's shared memory -> ptr<T, shared>
    extract,      // vector; int_value: lane -> scalar
    insert,       // vector, scalar; int_value: lane -> vector
    broadcast,    // scalar -> vector (lanes from the result type)
    reduce,       // vector; attr: arith (add, min, max) -> scalar
    mma,          // a, b, c: one warp's 16x8 (+)= 16xK . Kx8 from its lanes' fragments -> d; K 16
                  // (f16, bf16), or 32 for FP8 bytes (attr: their fp8_format); int_value: mma_layout
                  // (wave: one 64-lane wave's 16x16 (+)= 16x16 . 16x16, f16 or bf16)
    atomic,       // ptr, offset, value (cas: ptr, offset, compare, value); attr: atomic_op;
                  // int_value: memory_semantics -> old value (cas: old value, success)
    fence,        // int_value: memory_semantics
    print,        // values... (Int64 or Float64 scalars); callee: a C printf format with one conversion
                  // for each (%lld, %llu, %llx, %f, %e, %g, ...); written when the thread reaches it
    async_copy,   // dst (shared), dst offset, src, src offset, fill: attr consecutive elements copied
                  // while the thread goes on (4, 8 or 16 bytes); int_value: bytes both addresses are
                  // promised to be a multiple of. A false fill writes zeros and reads nothing.
    async_commit, // closes the group of the thread's async copies issued since the last
    async_wait,   // int_value: the groups that may stay pending; the thread's older ones land
    matrix_load,  // ptr (shared), offset (elements) -> a warp's 8x8 matrices of 16-bit words (attr: 1, 2
                  // or 4), matrix j's row r at the offset lane 8j + r holds; each lane gets its 32-bit
                  // share of each (row lane / 4, words 2 (lane % 4) + 0..1), or of its transpose
                  // (int_value 1). NVIDIA's ldmatrix: the frontend emits it for that target alone
    grid_dependency, // int_value 0: the thread waits until the grids ahead of this one in the stream have
                     // ended, their writes visible; 1: the grid after this one may start before this one
                     // ends (it waits at its own 0). What lets a kernel begin beside the one it follows
    ret,
};

// Whether `code` computes its results from its operands and registers alone:
// no memory, no effect, nothing another thread sees.
bool is_arithmetic(opcode code);

enum class arith : std::uint8_t
{
    // binary
    add,
    sub,
    mul,
    div, // integers truncate towards zero (C), floats IEEE
    rem, // sign of the dividend (C fmod for floats)
    bit_and,
    bit_or,
    bit_xor,
    shl,
    shr, // arithmetic for signed, logical for unsigned
    min,
    max,
    pow, // floats: C's pow
         // unary
    neg,
    bit_not,
    abs,
    exp,
    exp2,
    log,
    log2,
    sqrt,
    rsqrt,
    floor,
    ceil,
    // floats, from the target's math library (libm, libdevice, ocml)
    sin,
    cos,
    tanh,
    erf,
    // exp2 by the GPU's one-instruction approximation (NVIDIA's ex2.approx,
    // 2 ulp; AMD's v_exp_f32, 1 ulp); the CPU's is exp2's, exact
    exp2_approx,
};

enum class predicate : std::uint8_t
{
    eq,
    ne,
    lt,
    le,
    gt,
    ge,
};

// FP8 formats, held as u8 bytes; a cast with one of them as its attr decodes
// the bytes exactly (to a float type).
enum class fp8_format : std::uint8_t
{
    none,
    e4m3fnuz, // bias 8, max 240, NaN 0x80 only, no -0
    e4m3fn,   // bias 7, max 448, NaN 0x7F and 0xFF
};

// Whose fragments an mma's lanes hold.
enum class mma_layout : std::uint8_t
{
    warp, // NVIDIA's mma.m16n8k16 (.row.col) over a warp of 32 lanes (AMD: emulated)
    wave, // AMD's MFMA 16x16x16 over a wave of 64 lanes, as the matrix cores take them
};

// A read-modify-write of one element; `cas` replaces it only when it equals
// the compare operand.
enum class atomic_op : std::uint8_t
{
    add,
    sub,
    min,
    max,
    bit_and,
    bit_or,
    bit_xor,
    xchg,
    cas,
};

// Which threads an atomic or fence synchronizes with.
enum class memory_scope : std::uint8_t
{
    block,
    device,
    system,
};

enum class memory_order : std::uint8_t
{
    relaxed,
    acquire,
    release,
    acq_rel,
    seq_cst,
};

// An atomic's or fence's scope and order, packed into op::int_value.
struct memory_semantics
{
    memory_scope scope = memory_scope::system;
    memory_order order = memory_order::relaxed;

    std::int64_t packed() const
    {
        return static_cast<std::int64_t>(scope) * 8 + static_cast<std::int64_t>(order);
    }
    static memory_semantics unpack(std::int64_t v)
    {
        return {static_cast<memory_scope>(v / 8), static_cast<memory_order>(v % 8)};
    }
};

enum class special_register : std::uint8_t
{
    thread_idx,
    block_idx,
    block_dim,
    grid_dim,
};

using value_id = std::int32_t;

// Operands of a launch before the kernel's arguments: grid xyz, block xyz and
// smem bytes (Int32), then the stream (Int64; default_stream: the one the
// launcher call runs on, exported as _core.codes.default_stream).
inline constexpr std::size_t launch_operands = 8;
inline constexpr std::int64_t default_stream = -1;

struct region;

struct op
{
    op() = default;
    op(const op&) = delete; // owns its regions
    op& operator=(const op&) = delete;

    opcode code = opcode::ret;
    std::vector<value_id> operands;
    std::vector<value_id> results;
    std::vector<std::unique_ptr<region>> regions;
    int attr = 0;               // arith, predicate or special_register
    std::int64_t int_value = 0; // integer constant, or dimension
    double float_value = 0.0;   // float constant
    std::string callee;         // launch
    location loc;
};

struct region
{
    std::vector<value_id> arguments;
    std::vector<std::unique_ptr<op>> ops;
};

enum class function_kind : std::uint8_t
{
    host,   // runs once per launcher call; may launch kernels
    kernel, // runs once per thread of a launch
};

struct value_info
{
    type ty;
    std::string name; // for diagnostics and printing; may be empty
};

struct function
{
    std::string name;
    function_kind kind = function_kind::kernel;
    std::vector<value_id> parameters;
    std::vector<value_info> values; // indexed by value_id
    region body;
    std::array<std::int32_t, 3> known_block_size{0, 0, 0}; // 0: unknown
    std::int32_t min_blocks_per_sm = 0;   // GPUs: blocks a multiprocessor should hold at once (0: any)
    std::int64_t static_shared_bytes = 0; // shared memory the kernel declares; `smem=` comes on top
    location loc;

    value_id new_value(const type& t, std::string name = {});
    const type& type_of(value_id id) const { return values.at(static_cast<std::size_t>(id)).ty; }
};

struct module
{
    std::string name;
    std::vector<std::unique_ptr<function>> functions;

    function* find(const std::string& function_name) const;
};

// Readable text of the IR; also the content that disk-cache keys hash.
std::string print(const module& m);

// The predicate that holds where `p` does not.
predicate negated(predicate p);

// A compare that held (`holds`) or failed, read as lesser < greater (strict)
// or lesser <= greater: x > y is y < x, a failed x < y is y <= x. None for an
// (in)equality.
struct ordering
{
    value_id lesser;
    value_id greater;
    bool strict;
};
std::optional<ordering> ordering_of(const op& compare, bool holds);

} // namespace flyrt::ir
