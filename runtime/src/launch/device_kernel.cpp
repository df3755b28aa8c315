#include "device_kernel.hpp"

#include "blocking.hpp"
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

std::int32_t read_report(const std::string& kernel,
                         const std::vector<std::string>& messages,
                         std::size_t report_bytes,
                         const std::function<stream_wait()>& wait_stream,
                         const std::function<std::string(report_record&)>& copy_back,
                         const std::function<void()>& clear)
{
    stream_wait waited;
    {
        blocking_section others_run; // the GPU works: other Python threads run, Ctrl-C is seen
        waited = wait_stream();
    }
    if (waited.interrupted)
    {
        return fail("interrupted while kernel " + kernel + " ran (it goes on on the GPU)",
                    status_interrupted);
    }
    if (!waited.error.empty())
    {
        return fail("kernel " + kernel + " failed: " + waited.error);
    }
    report_record record;
    if (report_bytes != sizeof record)
    {
        return fail("kernel " + kernel + ": its report record has an unexpected size");
    }
    if (const std::string problem = copy_back(record); !problem.empty())
    {
        return fail("kernel " + kernel + ": cannot read its error report: " + problem);
    }
    if (record.taken != 0)
    {
        clear();
    }
    return report_status(record, kernel, messages);
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
