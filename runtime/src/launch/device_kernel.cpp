#include "device_kernel.hpp"

#include "flyrt/ir.hpp"

namespace flyrt::launch
{
namespace
{

thread_local std::int64_t t_call_stream = 0;

} // namespace

void set_call_stream(std::int64_t stream)
{
    t_call_stream = stream;
}

std::int64_t call_stream()
{
    return t_call_stream;
}

std::int32_t report_status(const report_record& record,
                           const std::string& kernel,
                           const std::vector<std::string>& messages)
{
    if (record.taken == 0)
    {
        return 0;
    }
    if (record.which < 0 || static_cast<std::size_t>(record.which) >= messages.size())
    {
        return fail("kernel " + kernel + " reported an error flyrt cannot name");
    }
    return fail(format_report(messages[record.which], codegen::report_values, record.values),
                status_reported);
}

} // namespace flyrt::launch

extern "C" std::int32_t flyrt_device_launch(flyrt::launch::device_kernel* kernel,
                                            const std::uint64_t* slots,
                                            const flyrt::launch::geometry* g,
                                            std::int64_t stream)
{
    using namespace flyrt;
    return kernel->launch(slots, *g, stream == ir::default_stream ? launch::call_stream() : stream);
}
