// Compile-only mode (flyrt/targets.py: FLYDSL_COMPILE_ONLY): launchers
// compile their kernels for a GPU this machine may not have and run
// nothing. Their host code runs as ever, so a launch's geometry is still
// checked against the target's limits; the kernels it would launch are
// these, which launch nothing.
#pragma once

#include <array>
#include <cstdint>

#include "../jit/code_bundle.hpp"
#include "device_kernel.hpp"

namespace flyrt::launch
{

void set_compile_only(bool on);
bool compile_only();

class compiled_only_kernel : public device_kernel
{
public:
    compiled_only_kernel(const jit::device_image& image, int max_threads, std::int64_t max_shared_bytes);

    std::int32_t launch(const std::uint64_t* slots, const geometry& g, std::int64_t stream) override;
    kernel_resources resources() const override { return m_resources; }

private:
    std::array<std::int32_t, 3> m_known_block;
    launch_limits m_limits;
    kernel_resources m_resources;
};

} // namespace flyrt::launch
