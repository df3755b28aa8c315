// history_request answered from IPython's history, so the client, %history
// and In[n] all agree. (xeus 2.4.1 would record every cell as line 1.)
#pragma once

#include <pybind11/pybind11.h>
#include <xeus/xhistory_manager.hpp>

namespace xflydsl
{

class ipython_history final : public xeus::xhistory_manager
{
public:
    // `facade` is set once the Python side exists (see interpreter).
    void attach(pybind11::object facade);

private:
    void configure_impl() override;
    void store_inputs_impl(int session,
                           int line_num,
                           const std::string& input,
                           const std::string& output) override;
    nl::json get_tail_impl(int n, bool raw, bool output) const override;
    nl::json get_range_impl(int session, int start, int stop, bool raw, bool output) const override;
    nl::json
    search_impl(const std::string& pattern, bool raw, bool output, int n, bool unique) const override;

    // Calls the facade; the caller holds the GIL.
    nl::json ask(const char* method, const pybind11::tuple& args) const;

    pybind11::object m_facade;
};

} // namespace xflydsl
