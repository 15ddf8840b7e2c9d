// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What every method of org.ganesha.nfsd.flexfiles does around its operation, so that the
// methods (dbus_methods.cpp) are only their arguments, their operation and their out
// arguments: read the arguments, each of an exact type (call); for the methods on one
// export, take `export_id` first and hold the FLEXFILES export it names for the call
// (on_export); keep exceptions out of Ganesha's dbus loop; answer Ganesha's way (answer).
//
// Errors as ExportMgr answers them: a malformed call (an argument missing, extra or of
// another type), an unknown export, an export that is not FLEXFILES and anything
// Verdict::invalid get org.freedesktop.DBus.Error.InvalidArgs with a message; otherwise
// the reply starts with STATUS_REPLY (`b status, s error`), false when the export refused.
//
// A header: dbus_methods.cpp is its one user, and all of it is templates and short inline
// functions.
#pragma once

#include "dbus/admin.hpp"
#include "dbus/dbus_glue.h"
#include "export.hpp"
#include "ganesha/ganesha.hpp"
#include "methods.hpp"

#include <cstdint>
#include <exception>
#include <string>

namespace flexfiles::mgmt {

// Reads the arguments in order, each of an exact type; the first mismatch is the error.
class Args {
public:
    Args(DBusMessageIter* it, DBusError* error) : it_(it), error_(error), more_(it != nullptr) {}

    bool u16(const char* name, std::uint16_t& out) { return basic(name, DBUS_TYPE_UINT16, &out); }
    bool u32(const char* name, std::uint32_t& out) { return basic(name, DBUS_TYPE_UINT32, &out); }
    bool boolean(const char* name, bool& out) {
        dbus_bool_t v = FALSE;
        if (!basic(name, DBUS_TYPE_BOOLEAN, &v))
            return false;
        out = v != FALSE;
        return true;
    }
    bool string(const char* name, std::string& out) {
        const char* v = nullptr;
        if (!basic(name, DBUS_TYPE_STRING, &v))
            return false;
        out = v != nullptr ? v : "";
        return true;
    }
    // No arguments left.
    bool end() {
        if (!more_)
            return true;
        dbus_set_error(error_, DBUS_ERROR_INVALID_ARGS,
                       "too many arguments: argument %u is not expected", index_ + 1);
        return false;
    }

private:
    static char type_code(int type) {
        return type == DBUS_TYPE_INVALID ? '-' : static_cast<char>(type);
    }

    bool basic(const char* name, int type, void* out) {
        const int got = more_ ? dbus_message_iter_get_arg_type(it_) : DBUS_TYPE_INVALID;
        if (got != type) {
            if (got == DBUS_TYPE_INVALID)
                dbus_set_error(error_, DBUS_ERROR_INVALID_ARGS,
                               "argument %u (%s) is missing: expected type '%c'", index_ + 1, name,
                               type_code(type));
            else
                dbus_set_error(error_, DBUS_ERROR_INVALID_ARGS,
                               "argument %u (%s) has type '%c', expected '%c'", index_ + 1, name,
                               type_code(got), type_code(type));
            return false;
        }
        dbus_message_iter_get_basic(it_, out);
        ++index_;
        more_ = dbus_message_iter_next(it_) != FALSE;
        return true;
    }

    DBusMessageIter* it_;
    DBusError* error_;
    bool more_;
    unsigned index_ = 0;
};

// A FLEXFILES export and a reference on its gsh_export for the call, so the export cannot
// be released under the method.
class ExportRef {
public:
    ExportRef() = default;
    ~ExportRef() { ff_mgmt_export_put(ref_); }
    ExportRef(const ExportRef&) = delete;
    ExportRef& operator=(const ExportRef&) = delete;

    // False (and the dbus error set) when there is no FLEXFILES export with that id.
    bool get(std::uint16_t export_id, DBusError* error) {
        bool exists = false;
        fsal_export* exp = ff_mgmt_export_get(export_id, &the_module, &ref_, &exists);
        if (exp == nullptr) {
            dbus_set_error(error, DBUS_ERROR_INVALID_ARGS,
                           exists ? "export %u is not a FLEXFILES export" : "no export with id %u",
                           static_cast<unsigned>(export_id));
            return false;
        }
        exp_ = Export::of(exp);
        return true;
    }
    Export& operator*() const { return *exp_; }
    gsh_export* ref() const { return ref_; }

private:
    gsh_export* ref_ = nullptr;
    Export* exp_ = nullptr;
};

// For methods with no arguments of their own besides what call / on_export read.
inline bool no_more(Args&) {
    return true;
}

// Every method: what `read` takes from the arguments, then no more, then `body()`. An
// exception becomes org.freedesktop.DBus.Error.Failed: it must never unwind into Ganesha's
// C dbus loop.
template <class Read, class Body>
bool call(DBusMessageIter* args, DBusError* error, Read&& read, Body&& body) noexcept {
    try {
        Args a(args, error);
        if (!read(a) || !a.end())
            return false;
        return body();
    } catch (const std::exception& e) {
        dbus_set_error(error, DBUS_ERROR_FAILED, "FLEXFILES: %s", e.what());
    } catch (...) {
        dbus_set_error(error, DBUS_ERROR_FAILED, "FLEXFILES: unexpected error");
    }
    return false;
}

// Every method on one export: `export_id` (q) first, then what `read` takes, then the
// FLEXFILES export with that id, held for the call, given to `body(exp)`. The arguments are
// all checked before the export is looked up, so a malformed call says so whatever the id.
template <class Read, class Body>
bool on_export(DBusMessageIter* args, DBusError* error, Read&& read, Body&& body) noexcept {
    std::uint16_t export_id = 0;
    return call(
        args, error, [&](Args& a) { return a.u16("export_id", export_id) && read(a); },
        [&] {
            ExportRef exp;
            return exp.get(export_id, error) && body(exp);
        });
}

// STATUS_REPLY with Ganesha's own gsh_dbus_status_reply. An empty message still says
// something: "OK", or "failed" where Ganesha's default would be "BUSY".
inline void append_status(DBusMessageIter* it, bool ok, const std::string& message) {
    const std::string text = message.empty() ? std::string(ok ? "OK" : "failed") : message;
    // It takes a char * but only appends the string to the reply (dbus/dbus_server.c).
    gsh_dbus_status_reply(it, ok, const_cast<char*>(text.c_str()));
}

// A Result as the method's answer: Verdict::invalid as the dbus error; otherwise the
// reply, STATUS_REPLY (false when refused) and then what `out` appends, the method's out
// arguments (appended when refused too: the signature has them). Returns what the method
// returns.
template <class Out> bool answer(const Result& r, DBusMessage* reply, DBusError* error, Out&& out) {
    if (r.verdict == Verdict::invalid) {
        dbus_set_error(error, DBUS_ERROR_INVALID_ARGS, "%s", r.message.c_str());
        return false;
    }
    DBusMessageIter it;
    dbus_message_iter_init_append(reply, &it);
    append_status(&it, r.verdict == Verdict::ok, r.message);
    out(&it);
    return true;
}

// For methods with no out arguments after STATUS_REPLY.
inline bool answer(const Result& r, DBusMessage* reply, DBusError* error) {
    return answer(r, reply, error, [](DBusMessageIter*) {});
}

} // namespace flexfiles::mgmt
