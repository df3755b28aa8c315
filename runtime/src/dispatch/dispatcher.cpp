#include "dispatcher.hpp"

#include <memory>

#include "dispatch_settings.hpp"
#include "launch_call.hpp"

namespace py = pybind11;

namespace flyrt::dispatch
{

// Per-thread call states reused across calls, so the hit path allocates
// nothing; nested calls (a launcher called from a compile) take the next one.
// One thread-local lookup per call: each costs a function call in a shared
// library.
class dispatcher::scratch
{
public:
    scratch() : m_thread(t_thread)
    {
        if (m_thread.depth == m_thread.states.size())
        {
            m_thread.states.push_back(std::make_unique<call_state>());
        }
        m_state = m_thread.states[m_thread.depth++].get();
    }
    ~scratch()
    {
        m_state->clear();
        --m_thread.depth;
    }
    call_state& operator*() { return *m_state; }

private:
    struct thread_states
    {
        std::vector<std::unique_ptr<call_state>> states;
        std::size_t depth = 0;
    };
    thread_states& m_thread;
    call_state* m_state;
    static thread_local thread_states t_thread;
};

thread_local dispatcher::scratch::thread_states dispatcher::scratch::t_thread;

dispatcher::dispatcher(std::string name,
                       std::vector<param_spec> params,
                       py::object compile,
                       py::object inline_call,
                       py::object adapt,
                       py::object revalidate)
    : m_name(std::move(name)), m_specializer(std::move(params), std::move(adapt)),
      m_compile(std::move(compile)), m_inline(std::move(inline_call)), m_revalidate(std::move(revalidate))
{
}

py::tuple dispatcher::specialize_for(PyObject* args, PyObject* kwargs, target_choice target)
{
    scratch held;
    call_state& state = *held;
    m_specializer.specialize(args, kwargs, state);
    state.key[1] = static_cast<std::int64_t>(target);
    return py::make_tuple(state.bound_tuple(), state.key_tuple());
}

placement dispatcher::place(call_state& state) const
{
    const placement where = choose_target(m_target != target_choice::automatic ? m_target : default_target(),
                                          state.devices,
                                          m_specializer.params(),
                                          m_name);
    state.key[1] = static_cast<std::int64_t>(where.target);
    state.key[2] = where.device;
    return where;
}

py::tuple dispatcher::key_of_call(PyObject* args, PyObject* kwargs)
{
    scratch held;
    call_state& state = *held;
    m_specializer.specialize(args, kwargs, state);
    place(state);
    return state.key_tuple();
}

py::object dispatcher::call(PyObject* args, PyObject* kwargs)
{
    if (tracing())
    {
        return py::reinterpret_steal<py::object>(PyObject_Call(m_inline.ptr(), args, kwargs));
    }
    scratch held;
    call_state& state = *held;
    m_specializer.specialize(args, kwargs, state);
    const placement where = place(state);
    // Held while it runs: another thread may evict it meanwhile (a long CPU
    // launch lets other Python threads run, cpu_launch.hpp).
    const std::shared_ptr<artifact> found = artifact_for(state);
    refuse_read_only_outputs(*found, state, m_specializer.params(), m_name);
    ++found->hits;
    launch_call(*found, state, where, m_name);
    return py::none();
}

void dispatcher::warmup(PyObject* args, PyObject* kwargs)
{
    if (tracing())
    {
        throw py::type_error("launcher '" + m_name +
                             "': warmup() compiles ahead of calls, not inside a kernel's trace");
    }
    scratch held;
    call_state& state = *held;
    m_specializer.specialize(args, kwargs, state);
    place(state);
    artifact_for(state);
}

std::shared_ptr<artifact> dispatcher::artifact_for(call_state& state)
{
    if (const std::shared_ptr<artifact>* cached = m_cache.find(state.key, m_revalidate))
    {
        return *cached;
    }
    py::tuple made = m_compile(state.bound_tuple(), state.key_tuple());
    std::shared_ptr<artifact> found = made[0].cast<std::shared_ptr<artifact>>();
    m_cache.add(state.key, found, made[1].cast<bool>());
    return found;
}

} // namespace flyrt::dispatch
