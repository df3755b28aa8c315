#include "dispatcher.hpp"

#include <memory>

#include "dispatch_settings.hpp"
#include "launch_call.hpp"
#include "specialization_key.hpp"

namespace py = pybind11;

namespace flyrt::dispatch
{

// Per-thread call states reused across calls, so the hit path allocates
// nothing; nested calls (a launcher called from a compile) take the next one.
class dispatcher::scratch
{
public:
    scratch()
    {
        if (t_depth == t_states.size())
        {
            t_states.push_back(std::make_unique<call_state>());
        }
        m_state = t_states[t_depth++].get();
    }
    ~scratch()
    {
        m_state->clear();
        --t_depth;
    }
    call_state& operator*() { return *m_state; }

private:
    call_state* m_state;
    static thread_local std::vector<std::unique_ptr<call_state>> t_states;
    static thread_local std::size_t t_depth;
};

thread_local std::vector<std::unique_ptr<call_state>> dispatcher::scratch::t_states;
thread_local std::size_t dispatcher::scratch::t_depth = 0;

dispatcher::dispatcher(std::string name,
                       std::vector<param_spec> params,
                       py::object compile,
                       py::object inline_call,
                       py::object adapt,
                       py::object revalidate)
    : m_name(std::move(name)), m_params(std::move(params)), m_compile(std::move(compile)),
      m_inline(std::move(inline_call)), m_adapt(std::move(adapt)), m_revalidate(std::move(revalidate))
{
}

void dispatcher::describe(std::size_t index, PyObject* value, call_state& state)
{
    const param_spec& p = m_params[index];
    switch (p.kind)
    {
    case param_kind::tensor:
        describe_tensor(index, p.name, value, m_adapt, state);
        break;
    case param_kind::scalar:
        describe_scalar(p, value, state);
        break;
    case param_kind::constexpr_:
        describe_constexpr(value, m_constexpr_ids, state);
        break;
    case param_kind::stream:
        describe_stream(p.name, value, state);
        break;
    }
}

void dispatcher::specialize(PyObject* args, PyObject* kwargs, call_state& state)
{
    bind_arguments(args, kwargs, m_params, state.bound);
    // Key: compile mode, target, device, then each parameter's part.
    state.key.insert(state.key.end(), {bounds_checks() ? 1 : 0, 0, 0});
    for (std::size_t i = 0; i < m_params.size(); ++i)
    {
        describe(i, state.bound[i], state);
    }
}

py::tuple dispatcher::specialize_for(PyObject* args, PyObject* kwargs, target_choice target)
{
    scratch held;
    call_state& state = *held;
    specialize(args, kwargs, state);
    state.key[1] = static_cast<std::int64_t>(target);
    return py::make_tuple(state.bound_tuple(), state.key_tuple());
}

py::object dispatcher::call(PyObject* args, PyObject* kwargs)
{
    if (tracing())
    {
        return py::reinterpret_steal<py::object>(PyObject_Call(m_inline.ptr(), args, kwargs));
    }
    scratch held;
    call_state& state = *held;
    specialize(args, kwargs, state);
    const placement where = choose_target(
        m_target != target_choice::automatic ? m_target : default_target(), state.devices, m_params, m_name);
    state.key[1] = static_cast<std::int64_t>(where.target);
    state.key[2] = where.device;

    // Held while it runs: another thread may evict it meanwhile (a long CPU
    // launch lets other Python threads run, cpu_launch.hpp).
    std::shared_ptr<artifact> found = m_cache.find(state.key, m_revalidate);
    if (!found)
    {
        py::tuple made = m_compile(state.bound_tuple(), state.key_tuple());
        found = made[0].cast<std::shared_ptr<artifact>>();
        m_cache.add(state.key, found, made[1].cast<bool>());
    }
    refuse_read_only_outputs(*found, state, m_params, m_name);
    ++found->hits;
    launch_call(*found, state, where, m_name);
    return py::none();
}

} // namespace flyrt::dispatch
