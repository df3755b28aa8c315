#include "cell_files.hpp"

#include <xeus/xsystem.hpp>

namespace xflydsl
{

std::string cell_file_folder()
{
    return xeus::get_tmp_prefix("xflydsl");
}

std::string cell_file(const std::string& code)
{
    return xeus::get_cell_tmp_file(cell_file_folder(), code, ".py");
}

} // namespace xflydsl
