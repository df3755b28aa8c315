#include "artifact.hpp"

#include "../jit/code_bundle.hpp"
#include "../jit/compiler.hpp"
#include "../launch/load_kernel.hpp"

namespace flyrt::dispatch
{

std::shared_ptr<artifact>
load_artifact(const std::string& payload, const std::string& entry, const target& kernels, int device)
{
    auto result = std::make_shared<artifact>();
    const jit::compiled_code code = jit::unpack(payload);
    jit::remember_parts(code, kernels);
    for (const jit::device_image& image : code.images)
    {
        result->kernels.push_back(launch::load_kernel(image, kernels, device));
        result->kernel_table.push_back(result->kernels.back().get());
        result->device_code.emplace_back(image.kernel, image.code);
    }
    result->code = std::make_shared<jit::loaded_object>(code.host_objects);
    result->entry = reinterpret_cast<decltype(result->entry)>(result->code->address(entry));
    return result;
}

} // namespace flyrt::dispatch
