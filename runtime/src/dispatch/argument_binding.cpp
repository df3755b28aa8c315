#include "argument_binding.hpp"

namespace flyrt::dispatch
{

void raise_argument_error(const char* problem, const std::string& name)
{
    throw pybind11::type_error("the launcher " + std::string(problem) + " '" + name + "'");
}

void raise_too_many_arguments(std::size_t count, std::size_t given)
{
    throw pybind11::type_error("the launcher takes " + std::to_string(count) + " arguments but " +
                               std::to_string(given) + " were given");
}

} // namespace flyrt::dispatch
