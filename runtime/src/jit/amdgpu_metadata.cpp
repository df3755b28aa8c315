#include "amdgpu_metadata.hpp"

#include <stdexcept>

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/Object/ELF.h>

namespace flyrt::jit
{
namespace
{

std::uint32_t number(llvm::msgpack::MapDocNode& map, llvm::StringRef key)
{
    auto found = map.find(key);
    if (found == map.end())
    {
        return 0;
    }
    const llvm::msgpack::DocNode& node = found->second;
    if (node.getKind() == llvm::msgpack::Type::UInt)
    {
        return static_cast<std::uint32_t>(node.getUInt());
    }
    if (node.getKind() == llvm::msgpack::Type::Int)
    {
        return static_cast<std::uint32_t>(node.getInt());
    }
    throw std::runtime_error("AMD code object metadata: " + key.str() + " is not a number");
}

std::string text(llvm::msgpack::MapDocNode& map, llvm::StringRef key)
{
    auto found = map.find(key);
    return found != map.end() && found->second.isString() ? found->second.getString().str() : std::string();
}

std::vector<code_object_kernel> kernels_of(llvm::StringRef note)
{
    llvm::msgpack::Document document;
    if (!document.readFromBlob(note, false) || !document.getRoot().isMap())
    {
        throw std::runtime_error("AMD code object metadata is not a msgpack map");
    }
    llvm::msgpack::MapDocNode root = document.getRoot().getMap();
    auto listed = root.find("amdhsa.kernels");
    if (listed == root.end() || !listed->second.isArray())
    {
        throw std::runtime_error("AMD code object metadata lists no kernels");
    }
    std::vector<code_object_kernel> out;
    for (llvm::msgpack::DocNode& node : listed->second.getArray())
    {
        llvm::msgpack::MapDocNode k = node.getMap();
        code_object_kernel kernel;
        kernel.name = text(k, ".name");
        kernel.kernarg_bytes = number(k, ".kernarg_segment_size");
        kernel.group_segment_bytes = number(k, ".group_segment_fixed_size");
        kernel.private_segment_bytes = number(k, ".private_segment_fixed_size");
        kernel.sgprs = number(k, ".sgpr_count");
        kernel.vgprs = number(k, ".vgpr_count");
        kernel.agprs = number(k, ".agpr_count");
        kernel.sgpr_spills = number(k, ".sgpr_spill_count");
        kernel.vgpr_spills = number(k, ".vgpr_spill_count");
        kernel.wavefront_size = number(k, ".wavefront_size");
        auto arguments = k.find(".args");
        if (arguments != k.end() && arguments->second.isArray())
        {
            for (llvm::msgpack::DocNode& a : arguments->second.getArray())
            {
                llvm::msgpack::MapDocNode argument = a.getMap();
                kernel.arguments.push_back(
                    {number(argument, ".offset"), number(argument, ".size"), text(argument, ".value_kind")});
            }
        }
        out.push_back(std::move(kernel));
    }
    return out;
}

} // namespace

std::vector<code_object_kernel> read_code_object(std::string_view elf)
{
    auto file = llvm::object::ELF64LEFile::create(llvm::StringRef(elf.data(), elf.size()));
    if (!file)
    {
        throw std::runtime_error("not an AMD code object: " + llvm::toString(file.takeError()));
    }
    if (file->getHeader().e_machine != llvm::ELF::EM_AMDGPU)
    {
        throw std::runtime_error("not an AMD code object: the ELF is for another machine");
    }
    auto headers = file->program_headers();
    if (!headers)
    {
        throw std::runtime_error("AMD code object: " + llvm::toString(headers.takeError()));
    }
    for (const auto& header : *headers)
    {
        if (header.p_type != llvm::ELF::PT_NOTE)
        {
            continue;
        }
        llvm::Error problem = llvm::Error::success();
        for (const auto& note : file->notes(header, problem))
        {
            if (note.getName() == "AMDGPU" && note.getType() == llvm::ELF::NT_AMDGPU_METADATA)
            {
                llvm::ArrayRef<std::uint8_t> desc = note.getDesc(header.p_align);
                std::vector<code_object_kernel> kernels =
                    kernels_of(llvm::StringRef(reinterpret_cast<const char*>(desc.data()), desc.size()));
                llvm::consumeError(std::move(problem));
                return kernels;
            }
        }
        if (problem)
        {
            throw std::runtime_error("AMD code object: " + llvm::toString(std::move(problem)));
        }
    }
    throw std::runtime_error("AMD code object without kernel metadata");
}

std::vector<argument_place>
argument_places(std::string_view elf, const std::string& kernel, std::size_t count)
{
    for (const code_object_kernel& k : read_code_object(elf))
    {
        if (k.name != kernel)
        {
            continue;
        }
        if (k.arguments.size() < count)
        {
            throw std::runtime_error("the code object of kernel " + kernel + " lists " +
                                     std::to_string(k.arguments.size()) + " arguments, not " +
                                     std::to_string(count));
        }
        std::vector<argument_place> places;
        for (std::size_t i = 0; i < count; ++i)
        {
            places.push_back({k.arguments[i].offset, k.arguments[i].size});
        }
        return places;
    }
    throw std::runtime_error("kernel " + kernel + " is missing from its own code object");
}

} // namespace flyrt::jit
