// Several relocatable objects as one payload: what an artifact's compile
// produces (one object per function) and the disk cache stores.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flyrt::jit
{

std::string pack_objects(const std::vector<std::string>& objects);

// The objects of a payload `pack_objects` made; throws std::runtime_error on
// anything else (a truncated or foreign payload).
std::vector<std::string_view> unpack_objects(std::string_view bundle);

} // namespace flyrt::jit
