#include "inline_math.hpp"

#include <cstdint>
#include <limits>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

namespace flyrt::codegen
{
namespace
{

struct constants
{
    llvm::IRBuilder<>& b;
    llvm::Type* real_type;
    llvm::Type* int_type;

    constants(llvm::IRBuilder<>& builder, llvm::Value* x)
        : b(builder), real_type(x->getType()), int_type(x->getType()->getWithNewType(builder.getInt32Ty()))
    {
    }
    llvm::Constant* real(double v) const { return llvm::ConstantFP::get(real_type, v); }
    llvm::Constant* integer(std::int64_t v) const
    {
        return llvm::ConstantInt::get(int_type, static_cast<std::uint64_t>(v), true);
    }
    llvm::Value* fma(llvm::Value* a, llvm::Value* x, llvm::Value* c) const
    {
        return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {real_type}, {a, x, c});
    }
    llvm::Value* clamp(llvm::Value* x, double low, double high) const
    {
        return b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum,
                                       b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, real(low)),
                                       real(high));
    }
    llvm::Value* round_down(llvm::Value* x) const
    {
        return b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
    }
};

// 2^r for |r| <= 1/2: 1 + r q(r) with q a degree-5 fit (Lawson-weighted
// least squares on Chebyshev nodes; max relative error 1.0e-7).
llvm::Value* exp2_reduced(const constants& c, llvm::Value* r)
{
    llvm::Value* q = c.real(1.53533575e-04);
    for (double k : {1.33988761e-03, 9.61843739e-03, 5.55033247e-02, 2.40226479e-01, 6.93147203e-01})
    {
        q = c.fma(q, r, c.real(k));
    }
    return c.fma(r, q, c.real(1.0));
}

// p * 2^n for an integral n in [-151, 129], as two exponent-field scalings
// so that results that overflow or are subnormal come out right.
llvm::Value* scale_by_power_of_two(const constants& c, llvm::Value* p, llvm::Value* n)
{
    llvm::IRBuilder<>& b = c.b;
    llvm::Value* exponent = b.CreateFPToSI(n, c.int_type);
    llvm::Value* half = b.CreateAShr(exponent, c.integer(1));
    auto power_of_two = [&](llvm::Value* e)
    { return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, c.integer(127)), c.integer(23)), c.real_type); };
    return b.CreateFMul(b.CreateFMul(p, power_of_two(half)), power_of_two(b.CreateSub(exponent, half)));
}

llvm::Value* keep_nan(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* result)
{
    return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

} // namespace

llvm::Value* exp2_f32(llvm::IRBuilder<>& b, llvm::Value* x)
{
    const constants c(b, x);
    llvm::Value* clamped = c.clamp(x, -151.0, 129.0);
    llvm::Value* n = c.round_down(b.CreateFAdd(clamped, c.real(0.5)));
    llvm::Value* r = b.CreateFSub(clamped, n);
    return keep_nan(b, x, scale_by_power_of_two(c, exp2_reduced(c, r), n));
}

llvm::Value* exp_f32(llvm::IRBuilder<>& b, llvm::Value* x)
{
    const constants c(b, x);
    constexpr double log2e = 1.4426950408889634;
    // e^x = 2^n e^r with r = x - n ln 2 (Cody and Waite: ln 2 in two parts,
    // the first exact in a product with n).
    llvm::Value* clamped = c.clamp(x, -104.0, 89.0);
    llvm::Value* n = c.round_down(c.fma(clamped, c.real(log2e), c.real(0.5)));
    llvm::Value* r = c.fma(n, c.real(-0.693145751953125), clamped);
    r = c.fma(n, c.real(-1.428606765330187e-06), r);
    llvm::Value* p = exp2_reduced(c, b.CreateFMul(r, c.real(log2e)));
    return keep_nan(b, x, scale_by_power_of_two(c, p, n));
}

llvm::Value* log_f32(llvm::IRBuilder<>& b, llvm::Value* x, bool base2)
{
    // x = 2^k m with m in [sqrt(1/2), sqrt(2)); log(m) = log(1 + f) from
    // s = f / (2 + f) and a polynomial in s^2 (as FreeBSD's logf).
    const constants c(b, x);
    llvm::Value* subnormal = b.CreateFCmpOLT(x, c.real(std::numeric_limits<float>::min()));
    llvm::Value* scaled = b.CreateSelect(subnormal, b.CreateFMul(x, c.real(33554432.0)), x); // 2^25
    llvm::Value* bits = b.CreateAdd(b.CreateBitCast(scaled, c.int_type), c.integer(0x3f800000 - 0x3f3504f3));
    llvm::Value* k = b.CreateAdd(b.CreateSub(b.CreateAShr(bits, c.integer(23)), c.integer(0x7f)),
                                 b.CreateSelect(subnormal, c.integer(-25), c.integer(0)));
    llvm::Value* m = b.CreateBitCast(
        b.CreateAdd(b.CreateAnd(bits, c.integer(0x007fffff)), c.integer(0x3f3504f3)), c.real_type);
    llvm::Value* f = b.CreateFSub(m, c.real(1.0));
    llvm::Value* s = b.CreateFDiv(f, b.CreateFAdd(c.real(2.0), f));
    llvm::Value* z = b.CreateFMul(s, s);
    llvm::Value* w = b.CreateFMul(z, z);
    llvm::Value* t1 = b.CreateFMul(w, c.fma(w, c.real(0.24279078841), c.real(0.40000972152)));
    llvm::Value* t2 = b.CreateFMul(z, c.fma(w, c.real(0.28498786688), c.real(0.66666662693)));
    llvm::Value* big_r = b.CreateFAdd(t2, t1);
    llvm::Value* hfsq = b.CreateFMul(b.CreateFMul(c.real(0.5), f), f);
    llvm::Value* dk = b.CreateSIToFP(k, c.real_type);
    llvm::Value* tail = b.CreateFMul(s, b.CreateFAdd(hfsq, big_r));
    llvm::Value* result = nullptr;
    if (base2)
    {
        // f - hfsq split into a high part with 12 bits, so that k + ... is exact at powers of two.
        llvm::Value* hi = b.CreateBitCast(
            b.CreateAnd(b.CreateBitCast(b.CreateFSub(f, hfsq), c.int_type), c.integer(-4096)), c.real_type);
        llvm::Value* lo = b.CreateFAdd(b.CreateFSub(b.CreateFSub(f, hi), hfsq), tail);
        constexpr double inv_ln2_hi = 1.4428710938e+00;
        constexpr double inv_ln2_lo = -1.7605285393e-04;
        result = b.CreateFAdd(b.CreateFAdd(b.CreateFMul(b.CreateFAdd(lo, hi), c.real(inv_ln2_lo)),
                                           b.CreateFMul(lo, c.real(inv_ln2_hi))),
                              b.CreateFMul(hi, c.real(inv_ln2_hi)));
        result = b.CreateFAdd(result, dk);
    }
    else
    {
        constexpr double ln2_hi = 6.9313812256e-01;
        constexpr double ln2_lo = 9.0580006145e-06;
        result = b.CreateFAdd(
            b.CreateFAdd(b.CreateFSub(b.CreateFAdd(tail, b.CreateFMul(dk, c.real(ln2_lo))), hfsq), f),
            b.CreateFMul(dk, c.real(ln2_hi)));
    }
    const double inf = std::numeric_limits<double>::infinity();
    result = b.CreateSelect(b.CreateFCmpOEQ(x, c.real(inf)), x, result);
    result = b.CreateSelect(
        b.CreateFCmpULT(x, c.real(0.0)), c.real(std::numeric_limits<double>::quiet_NaN()), result);
    return b.CreateSelect(b.CreateFCmpOEQ(x, c.real(0.0)), c.real(-inf), result);
}

} // namespace flyrt::codegen
