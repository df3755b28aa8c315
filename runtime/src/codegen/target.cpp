#include "flyrt/target.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/TargetParser.h>
#include <llvm/TargetParser/Triple.h>

namespace flyrt
{

std::string target::name() const
{
    switch (kind)
    {
    case target_kind::cpu:
        return "cpu";
    case target_kind::nvptx:
        return "nvptx";
    case target_kind::amdgpu:
        return "amdgpu";
    }
    throw std::logic_error("unknown target kind");
}

std::string target::id() const
{
    return name() + "/" + triple + "/" + cpu + "/" + features + "/w" + std::to_string(warp_size);
}

target cpu_target(int warp_size)
{
    if (warp_size != 32 && warp_size != 64)
    {
        throw std::invalid_argument("the CPU target's warp size is 32 or 64");
    }
    target t;
    t.kind = target_kind::cpu;
    t.triple = llvm::sys::getProcessTriple();
    t.cpu = llvm::sys::getHostCPUName().str();
    std::vector<std::string> features;
    for (const auto& feature : llvm::sys::getHostCPUFeatures())
    {
        features.push_back((feature.second ? "+" : "-") + feature.first().str());
    }
    std::sort(features.begin(), features.end()); // StringMap's order is not stable
    for (const std::string& feature : features)
    {
        t.features += (t.features.empty() ? "" : ",") + feature;
    }
    t.warp_size = warp_size;
    t.max_threads_per_block = 1024;
    t.max_shared_bytes = 64 * 1024;
    t.sync_in_while = false;
    return t;
}

target nvptx_target(int major, int minor)
{
    // Architectures LLVM 19's NVPTX backend knows, and the PTX ISA each needs.
    struct arch
    {
        int sm;
        int ptx;
        std::int64_t shared; // opt-in shared memory per block
    };
    static const arch known[] = {
        {60, 60, 48 * 1024},
        {61, 60, 48 * 1024},
        {62, 60, 48 * 1024},
        {70, 60, 96 * 1024},
        {72, 61, 96 * 1024},
        {75, 63, 64 * 1024},
        {80, 70, 163 * 1024},
        {86, 71, 99 * 1024},
        {87, 74, 163 * 1024},
        {89, 78, 99 * 1024},
        {90, 80, 227 * 1024},
    };
    const int wanted = major * 10 + minor;
    if (wanted < known[0].sm)
    {
        throw std::invalid_argument("compute capability " + std::to_string(major) + "." +
                                    std::to_string(minor) +
                                    " is older than flyrt's oldest NVIDIA target, sm_60");
    }
    const arch* best = &known[0];
    for (const arch& a : known)
    {
        if (a.sm <= wanted)
        {
            best = &a;
        }
    }
    target t;
    t.kind = target_kind::nvptx;
    t.triple = "nvptx64-nvidia-cuda";
    t.cpu = "sm_" + std::to_string(best->sm);
    t.features = "+ptx" + std::to_string(best->ptx);
    t.warp_size = 32;
    t.max_threads_per_block = 1024;
    t.max_shared_bytes = best->shared;
    t.global_address_space = 1;
    t.shared_address_space = 3;
    t.sync_in_while = true;
    t.matrix_multiply = best->sm >= 80;
    return t;
}

target amdgpu_target(const std::string& arch)
{
    // A target ID's feature suffixes (gfx942:sramecc+:xnack-) are left to
    // the default: code for either mode of those features.
    const std::string name = arch.substr(0, arch.find(':'));
    const llvm::AMDGPU::GPUKind kind = llvm::AMDGPU::parseArchAMDGCN(name);
    if (kind == llvm::AMDGPU::GK_NONE)
    {
        llvm::SmallVector<llvm::StringRef, 64> known;
        llvm::AMDGPU::fillValidArchListAMDGCN(known);
        std::string list;
        for (llvm::StringRef k : known)
        {
            list += (list.empty() ? "" : ", ") + k.str();
        }
        throw std::invalid_argument("'" + arch + "' is not an AMD GPU architecture LLVM 19 knows (" + list +
                                    ")");
    }
    target t;
    t.kind = target_kind::amdgpu;
    t.triple = "amdgcn-amd-amdhsa";
    t.cpu = llvm::AMDGPU::getArchNameAMDGCN(kind).str();
    if (llvm::AMDGPU::getArchAttrAMDGCN(kind) & llvm::AMDGPU::FEATURE_WAVE32)
    {
        t.features = "+wavefrontsize64";
    }
    t.warp_size = 64;
    t.max_threads_per_block = 1024;
    t.max_shared_bytes = 64 * 1024;
    t.global_address_space = 1;
    t.shared_address_space = 3;
    t.sync_in_while = true;
    // v_mfma_f32_16x16x16{f16,bf16_1k}
    t.matrix_multiply = t.cpu == "gfx90a" || t.cpu.rfind("gfx94", 0) == 0;
    return t;
}

} // namespace flyrt
