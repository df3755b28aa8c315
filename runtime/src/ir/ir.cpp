#include "flyrt/ir.hpp"

#include <stdexcept>

#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

namespace flyrt::ir
{

bool is_integer(scalar kind)
{
    return kind <= scalar::u64;
}

bool is_arithmetic(opcode code)
{
    switch (code)
    {
    case opcode::constant:
    case opcode::special:
    case opcode::unary:
    case opcode::binary:
    case opcode::compare:
    case opcode::select:
    case opcode::fma:
    case opcode::cast:
    case opcode::bitcast:
        return true;
    default:
        return false;
    }
}

bool is_unsigned(scalar kind)
{
    return kind == scalar::u8 || kind == scalar::u16 || kind == scalar::u32 || kind == scalar::u64 ||
           kind == scalar::i1;
}

bool is_float(scalar kind)
{
    return kind >= scalar::f16 && kind <= scalar::f64;
}

int bit_width(scalar kind)
{
    switch (kind)
    {
    case scalar::i1:
        return 1;
    case scalar::i8:
    case scalar::u8:
        return 8;
    case scalar::i16:
    case scalar::u16:
    case scalar::f16:
    case scalar::bf16:
        return 16;
    case scalar::i32:
    case scalar::u32:
    case scalar::f32:
        return 32;
    case scalar::i64:
    case scalar::u64:
    case scalar::f64:
    case scalar::ptr:
        return 64;
    }
    return 0;
}

std::string to_string(scalar kind)
{
    static const char* const names[] = {
        "i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64", "ptr"};
    return names[static_cast<int>(kind)];
}

std::string to_string(const type& t)
{
    if (t.lanes > 1)
    {
        return "vec<" + std::to_string(t.lanes) + " x " + to_string(t.kind) + ">";
    }
    if (t.kind != scalar::ptr)
    {
        return to_string(t.kind);
    }
    return "ptr<" + to_string(t.pointee) + (t.space == address_space::shared ? ", shared>" : ">");
}

value_id function::new_value(const type& t, std::string value_name)
{
    values.push_back(value_info{t, std::move(value_name)});
    return static_cast<value_id>(values.size() - 1);
}

function* module::find(const std::string& function_name) const
{
    for (const auto& f : functions)
    {
        if (f->name == function_name)
        {
            return f.get();
        }
    }
    return nullptr;
}

namespace
{

const char* opcode_name(opcode code)
{
    static const char* const names[] = {
        "constant",     "special",    "unary",       "binary",          "compare",
        "select",       "fma",        "cast",        "bitcast",         "load",
        "store",        "if",         "for",         "while",           "yield",
        "condition",    "launch",     "report",      "barrier",         "shuffle",
        "shared",       "extract",    "insert",      "broadcast",       "reduce",
        "mma",          "atomic",     "fence",       "print",           "async_copy",
        "async_commit", "async_wait", "matrix_load", "grid_dependency", "return"};
    return names[static_cast<int>(code)];
}

class printer
{
public:
    explicit printer(llvm::raw_string_ostream& out) : m_out(out) {}

    void print_function(const function& f)
    {
        m_fn = &f;
        m_file.clear();
        m_out << (f.kind == function_kind::kernel ? "kernel @" : "host @") << f.name << "(";
        list(f.parameters, true);
        m_out << ")";
        if (f.static_shared_bytes > 0)
        {
            m_out << " shared(" << f.static_shared_bytes << ")";
        }
        if (f.min_blocks_per_sm > 0)
        {
            m_out << " min_blocks(" << f.min_blocks_per_sm << ")";
        }
        if (f.known_block_size[0] > 0)
        {
            m_out << " block(" << f.known_block_size[0] << "," << f.known_block_size[1] << ","
                  << f.known_block_size[2] << ")";
        }
        m_out << " {\n";
        print_ops(f.body, 1);
        m_out << "}\n";
    }

private:
    std::string m_file; // of the op printed last

    void list(const std::vector<value_id>& ids, bool with_types)
    {
        for (std::size_t i = 0; i < ids.size(); ++i)
        {
            m_out << (i ? ", " : "") << "%" << ids[i];
            if (with_types)
            {
                m_out << ": " << to_string(m_fn->type_of(ids[i]));
            }
        }
    }

    void print_ops(const region& r, int depth)
    {
        for (const auto& o : r.ops)
        {
            m_out << std::string(static_cast<std::size_t>(depth) * 2, ' ');
            if (!o->results.empty())
            {
                list(o->results, true);
                m_out << " = ";
            }
            m_out << opcode_name(o->code);
            if (o->code == opcode::constant)
            {
                // Exact (hex) floats: the text keys the disk cache.
                if (is_float(m_fn->type_of(o->results[0]).kind))
                {
                    m_out << llvm::format("%a", o->float_value);
                }
                else
                {
                    m_out << o->int_value;
                }
            }
            else if ((o->code == opcode::load || o->code == opcode::store) && o->int_value > 0)
            {
                m_out << ".align" << o->int_value;
            }
            else if (o->code == opcode::atomic || o->code == opcode::fence)
            {
                // op, then scope and order: part of the text disk-cache keys hash
                m_out << "." << o->attr << "." << o->int_value;
            }
            else if (o->code == opcode::grid_dependency)
            {
                m_out << (o->int_value == 0 ? ".wait" : ".launch_dependents");
            }
            else if (o->code == opcode::shared)
            {
                m_out << "+" << o->int_value;
            }
            else if (o->code == opcode::async_copy)
            {
                m_out << ".x" << o->attr << ".align" << o->int_value;
            }
            else if (o->code == opcode::matrix_load)
            {
                m_out << ".x" << o->attr << (o->int_value != 0 ? ".trans" : "");
            }
            else if (o->code == opcode::async_wait)
            {
                m_out << "." << o->int_value;
            }
            else if (o->code == opcode::special)
            {
                m_out << "." << o->attr << "." << o->int_value;
            }
            else if (o->code == opcode::extract || o->code == opcode::insert)
            {
                m_out << "[" << o->int_value << "]";
            }
            else if (o->code == opcode::unary || o->code == opcode::binary || o->code == opcode::compare ||
                     o->code == opcode::reduce || (o->code == opcode::cast && o->attr != 0) ||
                     (o->code == opcode::mma && o->attr != 0))
            {
                m_out << "." << o->attr;
            }
            if (o->code == opcode::mma && o->int_value != 0)
            {
                m_out << ".wave";
            }
            if (!o->callee.empty())
            {
                m_out << " @" << o->callee;
            }
            m_out << " ";
            list(o->operands, false);
            m_out << "  // line " << o->loc.line;
            if (o->loc.file != m_file)
            {
                // the file too where it changes: compiled code's line information names it
                m_file = o->loc.file;
                m_out << " of " << m_file;
            }
            for (const auto& sub : o->regions)
            {
                m_out << "\n" << std::string(static_cast<std::size_t>(depth) * 2, ' ') << "^(";
                list(sub->arguments, true);
                m_out << "):\n";
                print_ops(*sub, depth + 1);
            }
            m_out << "\n";
        }
    }

    llvm::raw_string_ostream& m_out;
    const function* m_fn = nullptr;
};

} // namespace

std::string print(const module& m)
{
    // LLVM's streams, not iostreams: no locale, and no dependence on which
    // libstdc++ a GPU machine's compiler links.
    std::string text;
    llvm::raw_string_ostream out(text);
    printer p(out);
    for (const auto& f : m.functions)
    {
        p.print_function(*f);
    }
    return out.str();
}

predicate negated(predicate p)
{
    switch (p)
    {
    case predicate::eq:
        return predicate::ne;
    case predicate::ne:
        return predicate::eq;
    case predicate::lt:
        return predicate::ge;
    case predicate::le:
        return predicate::gt;
    case predicate::gt:
        return predicate::le;
    case predicate::ge:
        return predicate::lt;
    }
    return p;
}

std::optional<ordering> ordering_of(const op& compare, bool holds)
{
    const auto p =
        holds ? static_cast<predicate>(compare.attr) : negated(static_cast<predicate>(compare.attr));
    if (p == predicate::eq || p == predicate::ne)
    {
        return std::nullopt;
    }
    const bool swap = p == predicate::gt || p == predicate::ge;
    return ordering{compare.operands[swap ? 1 : 0],
                    compare.operands[swap ? 0 : 1],
                    p == predicate::lt || p == predicate::gt};
}

} // namespace flyrt::ir
