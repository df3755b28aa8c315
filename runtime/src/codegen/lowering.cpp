#include "lowering.hpp"

#include <cmath>
#include <stdexcept>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Support/Path.h>

namespace flyrt::codegen
{

using ir::arith;
using ir::opcode;
using ir::scalar;

function_lowering::function_lowering(const ir::module& m,
                                     const ir::function& f,
                                     const target& code_target,
                                     llvm::Module& out)
    : m_module(m), m_fn(f), m_target(code_target), m_out(out), m_ctx(out.getContext()), m_b(m_ctx),
      m_values(f.values.size(), nullptr)
{
}

namespace
{

llvm::DIFile* source_file(llvm::LLVMContext& context, const std::string& path)
{
    return llvm::DIFile::get(context, llvm::sys::path::filename(path), llvm::sys::path::parent_path(path));
}

} // namespace

void function_lowering::describe_source()
{
    if (m_out.getModuleFlag("Debug Info Version") == nullptr)
    {
        m_out.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
        m_out.addModuleFlag(llvm::Module::Warning, "Dwarf Version", 4);
    }
    // NVIDIA's tools take line information as .loc directives alone (what nvcc's -lineinfo gives).
    const auto emission = m_target.kind == target_kind::nvptx ? llvm::DICompileUnit::DebugDirectivesOnly
                                                              : llvm::DICompileUnit::LineTablesOnly;
    llvm::DIBuilder di(m_out);
    llvm::DIFile* file = source_file(m_ctx, m_fn.loc.file);
    llvm::DICompileUnit* unit =
        di.createCompileUnit(llvm::dwarf::DW_LANG_Python, file, "flyrt", true, "", 0, "", emission);
    m_scope = di.createFunction(unit,
                                m_fn.name,
                                m_llvm_fn->getName(),
                                file,
                                static_cast<unsigned>(m_fn.loc.line),
                                di.createSubroutineType(di.getOrCreateTypeArray({})),
                                static_cast<unsigned>(m_fn.loc.line),
                                llvm::DINode::FlagZero,
                                llvm::DISubprogram::SPFlagDefinition | llvm::DISubprogram::SPFlagOptimized);
    m_llvm_fn->setSubprogram(m_scope);
    di.finalize();
    m_b.SetCurrentDebugLocation(location_of(m_fn.loc));
}

const llvm::DILocation* function_lowering::location_of(const ir::location& loc)
{
    llvm::DIScope* scope = m_scope;
    if (loc.file != m_fn.loc.file)
    {
        scope = llvm::DILexicalBlockFile::get(m_ctx, m_scope, source_file(m_ctx, loc.file), 0);
    }
    return llvm::DILocation::get(m_ctx, static_cast<unsigned>(loc.line), 0, scope);
}

void function_lowering::unsupported(const ir::op& o, const std::string& what) const
{
    throw std::runtime_error(o.loc.file + ":" + std::to_string(o.loc.line) + ": " + what + " (kernel " +
                             m_fn.name + ", target " + m_target.name() + ")");
}

// Hooks a function of this kind never reaches: the verifier rejects thread
// indices, barriers, shuffles, shared memory and launches where they make
// no sense, so these are compiler bugs, not user errors.
llvm::Value* function_lowering::special(ir::special_register, int)
{
    throw std::logic_error("flyrt: a thread index outside a kernel");
}

void function_lowering::barrier(const ir::op&)
{
    throw std::logic_error("flyrt: a barrier outside a kernel");
}

void function_lowering::shuffle(const ir::op&)
{
    throw std::logic_error("flyrt: a shuffle outside a kernel");
}

llvm::Value* function_lowering::decode_fp8(llvm::Value* bytes, ir::fp8_format format, llvm::Type* to)
{
    // As flyrt/fp8.py's host helper: sign, 4 exponent bits, 3 mantissa bits.
    const int bias = format == ir::fp8_format::e4m3fnuz ? 8 : 7;
    llvm::Type* ints = bytes->getType()->getWithNewType(m_b.getInt32Ty());
    llvm::Type* reals = bytes->getType()->getWithNewType(m_b.getFloatTy());
    auto integer = [&](std::uint32_t v) { return llvm::ConstantInt::get(ints, v); };
    llvm::Value* code = m_b.CreateZExt(bytes, ints);
    llvm::Value* sign = m_b.CreateAnd(m_b.CreateLShr(code, integer(7)), integer(1));
    llvm::Value* exponent = m_b.CreateAnd(m_b.CreateLShr(code, integer(3)), integer(0xF));
    llvm::Value* mantissa = m_b.CreateAnd(code, integer(7));
    llvm::Value* normal = m_b.CreateBitCast(
        m_b.CreateOr(m_b.CreateOr(m_b.CreateShl(sign, integer(31)),
                                  m_b.CreateShl(m_b.CreateAdd(exponent, integer(127 - bias)), integer(23))),
                     m_b.CreateShl(mantissa, integer(20))),
        reals);
    llvm::Value* subnormal = m_b.CreateFMul(m_b.CreateUIToFP(mantissa, reals),
                                            llvm::ConstantFP::get(reals, std::ldexp(1.0, 1 - bias - 3)));
    subnormal = m_b.CreateSelect(m_b.CreateICmpEQ(sign, integer(1)), m_b.CreateFNeg(subnormal), subnormal);
    llvm::Value* result = m_b.CreateSelect(m_b.CreateICmpEQ(exponent, integer(0)), subnormal, normal);
    llvm::Value* nan = format == ir::fp8_format::e4m3fnuz
                           ? m_b.CreateICmpEQ(code, integer(0x80))
                           : m_b.CreateICmpEQ(m_b.CreateAnd(code, integer(0x7F)), integer(0x7F));
    result = m_b.CreateSelect(nan, llvm::ConstantFP::getNaN(reals), result);
    return to == reals ? result : m_b.CreateFPCast(result, to); // exact: every FP8 value is an f16 / bf16
}

void function_lowering::mma(const ir::op&)
{
    throw std::logic_error("flyrt: fx.mma outside a kernel");
}

void function_lowering::matrix_load(const ir::op&)
{
    throw std::logic_error("flyrt: a matrix load on a target other than NVIDIA's");
}

llvm::Value* function_lowering::shared_memory()
{
    throw std::logic_error("flyrt: shared memory outside a kernel");
}

void function_lowering::report(const ir::op&)
{
    throw std::logic_error("flyrt: this target cannot report errors");
}

void function_lowering::print(const ir::op&)
{
    throw std::logic_error("flyrt: this target cannot print");
}

void function_lowering::launch(const ir::op&)
{
    throw std::logic_error("flyrt: a launch outside a launcher");
}

llvm::Value* function_lowering::value(ir::value_id id)
{
    return m_values.at(static_cast<std::size_t>(id));
}

void function_lowering::bind(ir::value_id id, llvm::Value* v)
{
    m_values.at(static_cast<std::size_t>(id)) = v;
}

llvm::Type* function_lowering::llvm_type(scalar kind)
{
    switch (kind)
    {
    case scalar::i1:
        return m_b.getInt1Ty();
    case scalar::i8:
    case scalar::u8:
        return m_b.getInt8Ty();
    case scalar::i16:
    case scalar::u16:
        return m_b.getInt16Ty();
    case scalar::i32:
    case scalar::u32:
        return m_b.getInt32Ty();
    case scalar::i64:
    case scalar::u64:
        return m_b.getInt64Ty();
    case scalar::f16:
        return m_b.getHalfTy();
    case scalar::bf16:
        return m_b.getBFloatTy();
    case scalar::f32:
        return m_b.getFloatTy();
    case scalar::f64:
        return m_b.getDoubleTy();
    case scalar::ptr:
        return llvm::PointerType::get(m_ctx, m_target.global_address_space);
    }
    throw std::logic_error("unknown scalar kind");
}

llvm::Type* function_lowering::llvm_type(const ir::type& t)
{
    if (t.kind == scalar::ptr)
    {
        return llvm::PointerType::get(m_ctx,
                                      t.space == ir::address_space::shared ? m_target.shared_address_space
                                                                           : m_target.global_address_space);
    }
    llvm::Type* element = llvm_type(t.kind);
    return t.lanes > 1 ? llvm::FixedVectorType::get(element, t.lanes) : element;
}

// Emits a region's ops; returns the values of its terminator (if any).
std::vector<llvm::Value*> function_lowering::emit_region(const ir::region& r)
{
    std::vector<llvm::Value*> yielded;
    for (const auto& o : r.ops)
    {
        if (o->code == opcode::yield || o->code == opcode::condition)
        {
            for (ir::value_id id : o->operands)
            {
                yielded.push_back(value(id));
            }
        }
        else
        {
            emit_op(*o);
        }
    }
    return yielded;
}

void function_lowering::emit_op(const ir::op& o)
{
    if (m_scope != nullptr)
    {
        m_b.SetCurrentDebugLocation(location_of(o.loc));
    }
    switch (o.code)
    {
    case opcode::constant:
        bind(o.results[0], constant(m_fn.type_of(o.results[0]), o));
        break;
    case opcode::special:
        bind(o.results[0], special(static_cast<ir::special_register>(o.attr), static_cast<int>(o.int_value)));
        break;
    case opcode::unary:
        bind(o.results[0], unary(static_cast<arith>(o.attr), o.operands[0]));
        break;
    case opcode::binary:
        bind(o.results[0], binary(static_cast<arith>(o.attr), o.operands[0], o.operands[1]));
        break;
    case opcode::compare:
        bind(o.results[0], compare(static_cast<ir::predicate>(o.attr), o.operands[0], o.operands[1]));
        break;
    case opcode::select:
        bind(o.results[0],
             m_b.CreateSelect(value(o.operands[0]), value(o.operands[1]), value(o.operands[2])));
        break;
    case opcode::fma:
        bind(o.results[0], fma(o));
        break;
    case opcode::cast:
        bind(o.results[0],
             o.attr != 0 ? decode_fp8(value(o.operands[0]),
                                      static_cast<ir::fp8_format>(o.attr),
                                      llvm_type(m_fn.type_of(o.results[0])))
                         : cast(o.operands[0], m_fn.type_of(o.results[0])));
        break;
    case opcode::bitcast:
        bind(o.results[0], m_b.CreateBitCast(value(o.operands[0]), llvm_type(m_fn.type_of(o.results[0]))));
        break;
    case opcode::load:
        bind(o.results[0], load(o));
        break;
    case opcode::store:
        store(o);
        break;
    case opcode::extract:
        bind(o.results[0],
             m_b.CreateExtractElement(value(o.operands[0]), static_cast<std::uint64_t>(o.int_value)));
        break;
    case opcode::insert:
        bind(o.results[0],
             m_b.CreateInsertElement(
                 value(o.operands[0]), value(o.operands[1]), static_cast<std::uint64_t>(o.int_value)));
        break;
    case opcode::broadcast:
        bind(o.results[0], m_b.CreateVectorSplat(m_fn.type_of(o.results[0]).lanes, value(o.operands[0])));
        break;
    case opcode::reduce:
        bind(o.results[0], reduce(static_cast<arith>(o.attr), o.operands[0]));
        break;
    case opcode::if_:
        emit_if(o);
        break;
    case opcode::for_:
        emit_for(o);
        break;
    case opcode::while_:
        emit_while(o);
        break;
    case opcode::launch:
        launch(o);
        break;
    case opcode::report:
        report(o);
        break;
    case opcode::shared:
    {
        // Static arrays first, then `smem=` from a 64-byte boundary.
        const std::int64_t aligned_static = (m_fn.static_shared_bytes + 63) / 64 * 64;
        const std::int64_t offset = o.int_value >= 0 ? o.int_value : aligned_static;
        bind(o.results[0],
             m_b.CreateConstInBoundsGEP1_64(
                 m_b.getInt8Ty(), shared_memory(), static_cast<std::uint64_t>(offset)));
        break;
    }
    case opcode::barrier:
        barrier(o);
        break;
    case opcode::shuffle:
        shuffle(o);
        break;
    case opcode::mma:
        mma(o);
        break;
    case opcode::matrix_load:
        matrix_load(o);
        break;
    case opcode::atomic:
        atomic(o);
        break;
    case opcode::fence:
        fence(o);
        break;
    case opcode::print:
        print(o);
        break;
    case opcode::async_copy:
        async_copy(o);
        break;
    case opcode::async_commit:
        async_commit(o);
        break;
    case opcode::async_wait:
        async_wait(o);
        break;
    case opcode::grid_dependency:
        grid_dependency(o);
        break;
    case opcode::ret:
    case opcode::yield:
    case opcode::condition:
        break;
    }
}

llvm::Value* function_lowering::constant(const ir::type& t, const ir::op& o)
{
    llvm::Type* type = llvm_type(t);
    if (ir::is_float(t.kind))
    {
        return llvm::ConstantFP::get(type, o.float_value);
    }
    if (t.kind == scalar::ptr)
    {
        return llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(type));
    }
    return llvm::ConstantInt::get(type, static_cast<std::uint64_t>(o.int_value), !ir::is_unsigned(t.kind));
}

llvm::Value* function_lowering::unary(arith kind, ir::value_id operand)
{
    llvm::Value* x = value(operand);
    const scalar s = kind_of(operand);
    const bool fp = ir::is_float(s);
    switch (kind)
    {
    case arith::neg:
        return fp ? m_b.CreateFNeg(x) : m_b.CreateNeg(x);
    case arith::bit_not:
        return m_b.CreateNot(x);
    case arith::abs:
        return fp ? intrinsic(llvm::Intrinsic::fabs, x)
                  : m_b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, m_b.getFalse());
    case arith::exp:
    case arith::exp2:
    case arith::exp2_approx:
    case arith::log:
    case arith::log2:
    case arith::sqrt:
    case arith::rsqrt:
    case arith::sin:
    case arith::cos:
    case arith::tanh:
    case arith::erf:
        return math(kind, {x}, s);
    case arith::floor:
        return intrinsic(llvm::Intrinsic::floor, x);
    case arith::ceil:
        return intrinsic(llvm::Intrinsic::ceil, x);
    default:
        throw std::logic_error("not a unary op");
    }
}

llvm::Value* function_lowering::operand_slots(const ir::op& o)
{
    const std::size_t count = o.operands.size();
    if (count == 0)
    {
        return llvm::ConstantPointerNull::get(m_b.getPtrTy());
    }
    llvm::Function* fn = m_b.GetInsertBlock()->getParent();
    llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().getFirstInsertionPt());
    llvm::AllocaInst* slots = entry.CreateAlloca(llvm::ArrayType::get(m_b.getInt64Ty(), count));
    slots->setAlignment(llvm::Align(8));
    for (std::size_t i = 0; i < count; ++i)
    {
        m_b.CreateStore(value(o.operands[i]), m_b.CreateConstInBoundsGEP1_64(m_b.getInt64Ty(), slots, i));
    }
    return slots;
}

llvm::Value* function_lowering::call_per_lane(const std::string& name, llvm::ArrayRef<llvm::Value*> operands)
{
    llvm::Type* type = operands[0]->getType();
    llvm::Type* element = type->getScalarType();
    llvm::FunctionCallee callee = m_out.getOrInsertFunction(
        name, llvm::FunctionType::get(element, std::vector<llvm::Type*>(operands.size(), element), false));
    if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee()))
    {
        f->setDoesNotThrow();
        f->setWillReturn();
    }
    auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
    if (vector == nullptr)
    {
        return m_b.CreateCall(callee, operands);
    }
    llvm::Value* result = llvm::PoisonValue::get(vector);
    for (unsigned lane = 0; lane < vector->getNumElements(); ++lane)
    {
        std::vector<llvm::Value*> scalars;
        for (llvm::Value* operand : operands)
        {
            scalars.push_back(m_b.CreateExtractElement(operand, lane));
        }
        result = m_b.CreateInsertElement(result, m_b.CreateCall(callee, scalars), lane);
    }
    return result;
}

// Integer division and remainder that never trap: x / 0 is 0 (as in
// numpy), and MIN / -1 wraps to MIN, instead of SIGFPE.
llvm::Value*
function_lowering::safe_divisor(llvm::Value* a, llvm::Value* b, bool is_signed, llvm::Value*& by_zero)
{
    llvm::Type* t = b->getType();
    by_zero = m_b.CreateICmpEQ(b, llvm::ConstantInt::get(t, 0));
    llvm::Value* trap = by_zero;
    if (is_signed)
    {
        const unsigned width = t->getScalarSizeInBits();
        llvm::Value* min = llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(width));
        llvm::Value* overflow =
            m_b.CreateAnd(m_b.CreateICmpEQ(a, min), m_b.CreateICmpEQ(b, llvm::ConstantInt::getSigned(t, -1)));
        trap = m_b.CreateOr(trap, overflow);
    }
    return m_b.CreateSelect(trap, llvm::ConstantInt::get(t, 1), b);
}

llvm::Value* function_lowering::integer_divide(arith kind, llvm::Value* a, llvm::Value* b, bool is_signed)
{
    llvm::Value* by_zero = nullptr;
    llvm::Value* divisor = safe_divisor(a, b, is_signed, by_zero);
    llvm::Value* q = kind == arith::div
                         ? (is_signed ? m_b.CreateSDiv(a, divisor) : m_b.CreateUDiv(a, divisor))
                         : (is_signed ? m_b.CreateSRem(a, divisor) : m_b.CreateURem(a, divisor));
    return m_b.CreateSelect(by_zero, llvm::ConstantInt::get(a->getType(), 0), q);
}

llvm::Value* function_lowering::binary(arith kind, ir::value_id lhs, ir::value_id rhs)
{
    llvm::Value* a = value(lhs);
    llvm::Value* b = value(rhs);
    const scalar s = kind_of(lhs);
    const bool fp = ir::is_float(s);
    const bool is_signed = !ir::is_unsigned(s);
    switch (kind)
    {
    case arith::add:
        return fp ? m_b.CreateFAdd(a, b) : m_b.CreateAdd(a, b);
    case arith::sub:
        return fp ? m_b.CreateFSub(a, b) : m_b.CreateSub(a, b);
    case arith::mul:
        return fp ? m_b.CreateFMul(a, b) : m_b.CreateMul(a, b);
    case arith::div:
    case arith::rem:
    {
        if (fp)
        {
            return kind == arith::div ? m_b.CreateFDiv(a, b) : m_b.CreateFRem(a, b);
        }
        return integer_divide(kind, a, b, is_signed);
    }
    case arith::bit_and:
        return m_b.CreateAnd(a, b);
    case arith::bit_or:
        return m_b.CreateOr(a, b);
    case arith::bit_xor:
        return m_b.CreateXor(a, b);
    case arith::shl:
    case arith::shr:
    {
        // Shifting by the width or more is poison in LLVM; give 0 (or the
        // sign fill for an arithmetic right shift) as numpy does on x86.
        llvm::Type* t = a->getType();
        const unsigned width = t->getScalarSizeInBits();
        llvm::Value* too_far = m_b.CreateICmpUGE(b, llvm::ConstantInt::get(t, width));
        llvm::Value* amount = m_b.CreateSelect(too_far, llvm::ConstantInt::get(t, 0), b);
        if (kind == arith::shl)
        {
            return m_b.CreateSelect(too_far, llvm::ConstantInt::get(t, 0), m_b.CreateShl(a, amount));
        }
        if (is_signed)
        {
            llvm::Value* fill = m_b.CreateAShr(a, llvm::ConstantInt::get(t, width - 1));
            return m_b.CreateSelect(too_far, fill, m_b.CreateAShr(a, amount));
        }
        return m_b.CreateSelect(too_far, llvm::ConstantInt::get(t, 0), m_b.CreateLShr(a, amount));
    }
    case arith::min:
    case arith::max:
    {
        if (fp)
        {
            // NaN-propagating, like numpy.minimum / maximum.
            return m_b.CreateBinaryIntrinsic(
                kind == arith::min ? llvm::Intrinsic::minimum : llvm::Intrinsic::maximum, a, b);
        }
        llvm::Intrinsic::ID id = kind == arith::min
                                     ? (is_signed ? llvm::Intrinsic::smin : llvm::Intrinsic::umin)
                                     : (is_signed ? llvm::Intrinsic::smax : llvm::Intrinsic::umax);
        return m_b.CreateBinaryIntrinsic(id, a, b);
    }
    case arith::pow:
        return math(kind, {a, b}, s);
    default:
        throw std::logic_error("not a binary op");
    }
}

llvm::Value* function_lowering::compare(ir::predicate p, ir::value_id lhs, ir::value_id rhs)
{
    llvm::Value* a = value(lhs);
    llvm::Value* b = value(rhs);
    const scalar s = kind_of(lhs);
    if (ir::is_float(s))
    {
        static const llvm::CmpInst::Predicate fp[] = {llvm::CmpInst::FCMP_OEQ,
                                                      llvm::CmpInst::FCMP_UNE,
                                                      llvm::CmpInst::FCMP_OLT,
                                                      llvm::CmpInst::FCMP_OLE,
                                                      llvm::CmpInst::FCMP_OGT,
                                                      llvm::CmpInst::FCMP_OGE};
        return m_b.CreateFCmp(fp[static_cast<int>(p)], a, b);
    }
    static const llvm::CmpInst::Predicate sint[] = {llvm::CmpInst::ICMP_EQ,
                                                    llvm::CmpInst::ICMP_NE,
                                                    llvm::CmpInst::ICMP_SLT,
                                                    llvm::CmpInst::ICMP_SLE,
                                                    llvm::CmpInst::ICMP_SGT,
                                                    llvm::CmpInst::ICMP_SGE};
    static const llvm::CmpInst::Predicate uint[] = {llvm::CmpInst::ICMP_EQ,
                                                    llvm::CmpInst::ICMP_NE,
                                                    llvm::CmpInst::ICMP_ULT,
                                                    llvm::CmpInst::ICMP_ULE,
                                                    llvm::CmpInst::ICMP_UGT,
                                                    llvm::CmpInst::ICMP_UGE};
    return m_b.CreateICmp(ir::is_unsigned(s) ? uint[static_cast<int>(p)] : sint[static_cast<int>(p)], a, b);
}

llvm::Value* function_lowering::reduce(arith kind, ir::value_id vector)
{
    llvm::Value* v = value(vector);
    const scalar s = kind_of(vector);
    const bool fp = ir::is_float(s);
    switch (kind)
    {
    case arith::add:
        // In lane order, so results match a sequential sum.
        return fp ? m_b.CreateFAddReduce(llvm::ConstantFP::getNegativeZero(llvm_type(s)), v)
                  : m_b.CreateAddReduce(v);
    case arith::max:
        return fp ? m_b.CreateFPMaximumReduce(v) : m_b.CreateIntMaxReduce(v, !ir::is_unsigned(s));
    case arith::min:
        return fp ? m_b.CreateFPMinimumReduce(v) : m_b.CreateIntMinReduce(v, !ir::is_unsigned(s));
    default:
        throw std::logic_error("vectors reduce with add, min or max");
    }
}

llvm::Value* function_lowering::fma(const ir::op& o)
{
    llvm::Value* a = value(o.operands[0]);
    llvm::Value* b = value(o.operands[1]);
    llvm::Value* c = value(o.operands[2]);
    if (ir::is_float(kind_of(o.operands[0])))
    {
        return m_b.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, b, c});
    }
    return m_b.CreateAdd(m_b.CreateMul(a, b), c);
}

llvm::Value* function_lowering::cast(ir::value_id operand, const ir::type& result)
{
    llvm::Value* x = value(operand);
    const scalar from = kind_of(operand);
    const scalar to = result.kind;
    llvm::Type* target = llvm_type(result);
    if (from == to)
    {
        return x;
    }
    const bool from_fp = ir::is_float(from);
    const bool to_fp = ir::is_float(to);
    if (to == scalar::i1)
    {
        return from_fp ? m_b.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0))
                       : m_b.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
    }
    if (from_fp && to_fp)
    {
        return m_b.CreateFPCast(x, target);
    }
    if (from_fp)
    {
        // Saturating: out-of-range and NaN inputs give defined results.
        return m_b.CreateIntrinsic(ir::is_unsigned(to) ? llvm::Intrinsic::fptoui_sat
                                                       : llvm::Intrinsic::fptosi_sat,
                                   {target, x->getType()},
                                   {x});
    }
    if (to_fp)
    {
        return ir::is_unsigned(from) ? m_b.CreateUIToFP(x, target) : m_b.CreateSIToFP(x, target);
    }
    return m_b.CreateIntCast(x, target, !ir::is_unsigned(from));
}

// An access's alignment: what `align=` promised on GPUs, which need it for
// one wide access; the element's on the CPU, whose unaligned vector moves
// cost what aligned ones do, so a broken promise cannot fault there.
unsigned function_lowering::alignment(const ir::op& o, const ir::type& t) const
{
    const int element = std::max(1, ir::bit_width(t.kind) / 8);
    return static_cast<unsigned>(m_target.is_gpu() ? std::max<std::int64_t>(element, o.int_value) : element);
}

// GPUs move a vector only to or from an address that is a multiple of its
// size (LLVM 19's NVPTX backend makes a <16 x i8> load one 16-byte load even
// at alignment 1): a vector less aligned than that goes in pieces of the
// alignment it has.
unsigned function_lowering::piece_lanes(const ir::type& t, unsigned align) const
{
    const unsigned element = static_cast<unsigned>(std::max(1, ir::bit_width(t.kind) / 8));
    if (!m_target.is_gpu() || t.lanes <= 1 || align >= t.lanes * element)
    {
        return t.lanes;
    }
    return std::max(1u, align / element);
}

llvm::Value* function_lowering::load(const ir::op& o)
{
    const ir::type& t = m_fn.type_of(o.results[0]);
    llvm::Type* element = llvm_type(t.kind);
    llvm::Value* where = address(o, element);
    const unsigned align = alignment(o, t);
    const unsigned piece = piece_lanes(t, align);
    if (piece == t.lanes)
    {
        llvm::LoadInst* whole = m_b.CreateLoad(llvm_type(t), where);
        whole->setAlignment(llvm::Align(align));
        return whole;
    }
    llvm::Type* piece_type = piece > 1 ? llvm::FixedVectorType::get(element, piece) : element;
    llvm::Value* vector = llvm::PoisonValue::get(llvm_type(t));
    for (unsigned first = 0; first < t.lanes; first += piece)
    {
        llvm::LoadInst* part =
            m_b.CreateLoad(piece_type, m_b.CreateConstInBoundsGEP1_64(element, where, first));
        part->setAlignment(llvm::Align(align));
        for (unsigned lane = 0; lane < piece; ++lane)
        {
            llvm::Value* value = piece > 1 ? m_b.CreateExtractElement(part, lane) : part;
            vector = m_b.CreateInsertElement(vector, value, first + lane);
        }
    }
    return vector;
}

void function_lowering::store(const ir::op& o)
{
    const ir::type& t = m_fn.type_of(o.operands[2]);
    llvm::Type* element = llvm_type(t.kind);
    llvm::Value* where = address(o, element);
    llvm::Value* stored = value(o.operands[2]);
    const unsigned align = alignment(o, t);
    const unsigned piece = piece_lanes(t, align);
    if (piece == t.lanes)
    {
        m_b.CreateStore(stored, where)->setAlignment(llvm::Align(align));
        return;
    }
    for (unsigned first = 0; first < t.lanes; first += piece)
    {
        llvm::Value* part = nullptr;
        if (piece > 1)
        {
            std::vector<int> lanes;
            for (unsigned lane = 0; lane < piece; ++lane)
            {
                lanes.push_back(static_cast<int>(first + lane));
            }
            part = m_b.CreateShuffleVector(stored, lanes);
        }
        else
        {
            part = m_b.CreateExtractElement(stored, first);
        }
        m_b.CreateStore(part, m_b.CreateConstInBoundsGEP1_64(element, where, first))
            ->setAlignment(llvm::Align(align));
    }
}

llvm::Value* function_lowering::address(const ir::op& o, llvm::Type* element, std::size_t pointer)
{
    const ir::value_id offset_id = o.operands[pointer + 1];
    llvm::Value* offset =
        m_b.CreateIntCast(value(offset_id), m_b.getInt64Ty(), !ir::is_unsigned(kind_of(offset_id)));
    return m_b.CreateGEP(element, value(o.operands[pointer]), offset);
}

namespace
{

llvm::AtomicOrdering ordering(ir::memory_order order)
{
    switch (order)
    {
    case ir::memory_order::relaxed:
        return llvm::AtomicOrdering::Monotonic;
    case ir::memory_order::acquire:
        return llvm::AtomicOrdering::Acquire;
    case ir::memory_order::release:
        return llvm::AtomicOrdering::Release;
    case ir::memory_order::acq_rel:
        return llvm::AtomicOrdering::AcquireRelease;
    case ir::memory_order::seq_cst:
        break;
    }
    return llvm::AtomicOrdering::SequentiallyConsistent;
}

llvm::AtomicRMWInst::BinOp rmw_op(ir::atomic_op kind, ir::scalar s)
{
    const bool fp = ir::is_float(s);
    const bool is_unsigned = ir::is_unsigned(s);
    switch (kind)
    {
    case ir::atomic_op::add:
        return fp ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add;
    case ir::atomic_op::sub:
        return fp ? llvm::AtomicRMWInst::FSub : llvm::AtomicRMWInst::Sub;
    case ir::atomic_op::min:
        return is_unsigned ? llvm::AtomicRMWInst::UMin : llvm::AtomicRMWInst::Min;
    case ir::atomic_op::max:
        return is_unsigned ? llvm::AtomicRMWInst::UMax : llvm::AtomicRMWInst::Max;
    case ir::atomic_op::bit_and:
        return llvm::AtomicRMWInst::And;
    case ir::atomic_op::bit_or:
        return llvm::AtomicRMWInst::Or;
    case ir::atomic_op::bit_xor:
        return llvm::AtomicRMWInst::Xor;
    case ir::atomic_op::xchg:
    case ir::atomic_op::cas:
        break;
    }
    return llvm::AtomicRMWInst::Xchg;
}

} // namespace

llvm::SyncScope::ID function_lowering::sync_scope(ir::memory_scope)
{
    return llvm::SyncScope::System;
}

void function_lowering::atomic(const ir::op& o)
{
    const auto sem = ir::memory_semantics::unpack(o.int_value);
    const auto kind = static_cast<ir::atomic_op>(o.attr);
    const ir::scalar s = kind_of(o.operands.back());
    llvm::Type* element = llvm_type(s);
    llvm::Value* where = address(o, element);
    const llvm::Align align(static_cast<std::uint64_t>(ir::bit_width(s) / 8));
    const llvm::SyncScope::ID scope = sync_scope(sem.scope);
    if (kind == ir::atomic_op::cas)
    {
        // A failed exchange only reads: it cannot release.
        const llvm::AtomicOrdering success = ordering(sem.order);
        const llvm::AtomicOrdering failure =
            sem.order == ir::memory_order::release   ? llvm::AtomicOrdering::Monotonic
            : sem.order == ir::memory_order::acq_rel ? llvm::AtomicOrdering::Acquire
                                                     : success;
        llvm::Value* pair = m_b.CreateAtomicCmpXchg(
            where, value(o.operands[2]), value(o.operands[3]), align, success, failure, scope);
        bind(o.results[0], m_b.CreateExtractValue(pair, 0));
        bind(o.results[1], m_b.CreateExtractValue(pair, 1));
        return;
    }
    bind(
        o.results[0],
        m_b.CreateAtomicRMW(rmw_op(kind, s), where, value(o.operands[2]), align, ordering(sem.order), scope));
}

void function_lowering::fence(const ir::op& o)
{
    const auto sem = ir::memory_semantics::unpack(o.int_value);
    m_b.CreateFence(ordering(sem.order), sync_scope(sem.scope));
}

void function_lowering::async_copy(const ir::op& o)
{
    const ir::scalar element_kind = m_fn.type_of(o.operands[0]).pointee;
    llvm::Type* element = llvm_type(element_kind);
    const unsigned lanes = static_cast<unsigned>(o.attr);
    llvm::Type* copied = lanes > 1 ? llvm::FixedVectorType::get(element, lanes) : element;
    const unsigned element_bytes = static_cast<unsigned>(std::max(1, ir::bit_width(element_kind) / 8));
    const llvm::Align align(std::min(std::max<unsigned>(element_bytes, static_cast<unsigned>(o.int_value)),
                                     element_bytes * lanes));
    llvm::Value* dst = address(o, element, 0);
    llvm::Value* src = address(o, element, 2);
    // The source is read only where fill is true: it may lie outside the tensor elsewhere.
    auto* read_bb = llvm::BasicBlock::Create(m_ctx, "copy.read", m_llvm_fn);
    auto* write_bb = llvm::BasicBlock::Create(m_ctx, "copy.write", m_llvm_fn);
    llvm::BasicBlock* from = m_b.GetInsertBlock();
    m_b.CreateCondBr(value(o.operands[4]), read_bb, write_bb);
    m_b.SetInsertPoint(read_bb);
    llvm::Value* read = m_b.CreateAlignedLoad(copied, src, align);
    m_b.CreateBr(write_bb);
    m_b.SetInsertPoint(write_bb);
    llvm::PHINode* data = m_b.CreatePHI(copied, 2);
    data->addIncoming(read, read_bb);
    data->addIncoming(llvm::Constant::getNullValue(copied), from);
    m_b.CreateAlignedStore(data, dst, align);
}

void function_lowering::emit_if(const ir::op& o)
{
    auto* then_bb = llvm::BasicBlock::Create(m_ctx, "then", m_llvm_fn);
    auto* else_bb = llvm::BasicBlock::Create(m_ctx, "else", m_llvm_fn);
    auto* merge = llvm::BasicBlock::Create(m_ctx, "endif", m_llvm_fn);
    m_b.CreateCondBr(value(o.operands[0]), then_bb, else_bb);

    m_b.SetInsertPoint(then_bb);
    const auto then_values = emit_region(*o.regions[0]);
    llvm::BasicBlock* then_end = m_b.GetInsertBlock();
    m_b.CreateBr(merge);

    m_b.SetInsertPoint(else_bb);
    const auto else_values = emit_region(*o.regions[1]);
    llvm::BasicBlock* else_end = m_b.GetInsertBlock();
    m_b.CreateBr(merge);

    m_b.SetInsertPoint(merge);
    std::vector<llvm::PHINode*> phis; // all phis first: binding may add stores
    for (std::size_t i = 0; i < o.results.size(); ++i)
    {
        phis.push_back(m_b.CreatePHI(then_values[i]->getType(), 2));
        phis.back()->addIncoming(then_values[i], then_end);
        phis.back()->addIncoming(else_values[i], else_end);
    }
    for (std::size_t i = 0; i < o.results.size(); ++i)
    {
        bind(o.results[i], phis[i]);
    }
}

void function_lowering::emit_for(const ir::op& o)
{
    const ir::region& body = *o.regions[0];
    llvm::Value* lower = value(o.operands[0]);
    llvm::Value* upper = value(o.operands[1]);
    llvm::Value* step = value(o.operands[2]);
    const bool is_signed = !ir::is_unsigned(kind_of(o.operands[0]));

    std::vector<llvm::Value*> inits; // before the header: reading them may emit loads
    for (std::size_t i = 3; i < o.operands.size(); ++i)
    {
        inits.push_back(value(o.operands[i]));
    }
    llvm::BasicBlock* pre = m_b.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(m_ctx, "for.header", m_llvm_fn);
    auto* inside = llvm::BasicBlock::Create(m_ctx, "for.body", m_llvm_fn);
    auto* exit = llvm::BasicBlock::Create(m_ctx, "for.exit", m_llvm_fn);
    m_b.CreateBr(header);

    m_b.SetInsertPoint(header);
    llvm::PHINode* iv = m_b.CreatePHI(lower->getType(), 2, "iv");
    iv->addIncoming(lower, pre);
    std::vector<llvm::PHINode*> carried;
    for (llvm::Value* init : inits)
    {
        llvm::PHINode* phi = m_b.CreatePHI(init->getType(), 2);
        phi->addIncoming(init, pre);
        carried.push_back(phi);
    }
    // Python's range: a positive step runs while iv < upper, a negative one while iv > upper.
    llvm::Value* keep_going = nullptr;
    if (auto* constant_step = llvm::dyn_cast<llvm::ConstantInt>(step))
    {
        const bool up = is_signed ? !constant_step->isNegative() : true;
        keep_going = up ? (is_signed ? m_b.CreateICmpSLT(iv, upper) : m_b.CreateICmpULT(iv, upper))
                        : m_b.CreateICmpSGT(iv, upper);
    }
    else
    {
        llvm::Value* up =
            is_signed ? m_b.CreateICmpSGT(step, llvm::ConstantInt::get(step->getType(), 0)) : m_b.getTrue();
        llvm::Value* below = is_signed ? m_b.CreateICmpSLT(iv, upper) : m_b.CreateICmpULT(iv, upper);
        llvm::Value* above = m_b.CreateICmpSGT(iv, upper);
        keep_going = m_b.CreateSelect(up, below, above);
    }
    m_b.CreateCondBr(keep_going, inside, exit);

    m_b.SetInsertPoint(inside);
    bind(body.arguments[0], iv);
    for (std::size_t i = 0; i < carried.size(); ++i)
    {
        bind(body.arguments[i + 1], carried[i]);
    }
    const auto yielded = emit_region(body);
    llvm::BasicBlock* latch = m_b.GetInsertBlock();
    iv->addIncoming(m_b.CreateAdd(iv, step), latch);
    for (std::size_t i = 0; i < carried.size(); ++i)
    {
        carried[i]->addIncoming(yielded[i], latch);
    }
    m_b.CreateBr(header);

    m_b.SetInsertPoint(exit);
    for (std::size_t i = 0; i < carried.size(); ++i)
    {
        bind(o.results[i], carried[i]);
    }
}

void function_lowering::emit_while(const ir::op& o)
{
    const ir::region& before = *o.regions[0];
    const ir::region& after = *o.regions[1];
    std::vector<llvm::Value*> inits; // before the header: reading them may emit loads
    for (ir::value_id id : o.operands)
    {
        inits.push_back(value(id));
    }
    llvm::BasicBlock* pre = m_b.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(m_ctx, "while.cond", m_llvm_fn);
    auto* inside = llvm::BasicBlock::Create(m_ctx, "while.body", m_llvm_fn);
    auto* exit = llvm::BasicBlock::Create(m_ctx, "while.exit", m_llvm_fn);
    m_b.CreateBr(header);

    m_b.SetInsertPoint(header);
    std::vector<llvm::PHINode*> carried;
    for (llvm::Value* init : inits)
    {
        llvm::PHINode* phi = m_b.CreatePHI(init->getType(), 2);
        phi->addIncoming(init, pre);
        carried.push_back(phi);
    }
    for (std::size_t i = 0; i < carried.size(); ++i)
    {
        bind(before.arguments[i], carried[i]);
    }
    const auto forwarded = emit_region(before); // cond, values...
    m_b.CreateCondBr(forwarded[0], inside, exit);

    m_b.SetInsertPoint(inside);
    for (std::size_t i = 0; i < carried.size(); ++i)
    {
        bind(after.arguments[i], forwarded[i + 1]);
    }
    const auto yielded = emit_region(after);
    llvm::BasicBlock* latch = m_b.GetInsertBlock();
    for (std::size_t i = 0; i < carried.size(); ++i)
    {
        carried[i]->addIncoming(yielded[i], latch);
    }
    m_b.CreateBr(header);

    m_b.SetInsertPoint(exit);
    for (std::size_t i = 0; i < carried.size(); ++i)
    {
        bind(o.results[i], forwarded[i + 1]);
    }
}

} // namespace flyrt::codegen
