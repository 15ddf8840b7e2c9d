// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The methods of org.ganesha.nfsd.flexfiles (/org/ganesha/nfsd/FlexFiles): argument
// checks, the export look-up and the replies, in Ganesha's style (see dbus_glue.c for the
// table with the signatures). Every reply starts with `b status, s error` (Ganesha's
// STATUS_REPLY: "OK" or what went wrong). Malformed calls (wrong argument count or types),
// an unknown export, and anything mgmt::Verdict::invalid get a dbus error
// org.freedesktop.DBus.Error.InvalidArgs with a message, as ExportMgr answers a bad
// export id; an operation the export refuses answers status false and the message.
//
// They run on Ganesha's dbus thread, one at a time, holding a reference on the export for
// the call, so the export cannot be released under them.
#include "export.hpp"
#include "layout/sal_shim.h"
#include "mgmt/admin.hpp"
#include "mgmt/dbus_glue.h"
#include "module.hpp"

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace flexfiles::mgmt {
namespace {

char type_code(int type) {
    return type == DBUS_TYPE_INVALID ? '-' : static_cast<char>(type);
}

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

// A FLEXFILES export and a reference on it for the call.
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

// ---- Replies ----

void append_string(DBusMessageIter* it, const std::string& s) {
    const char* p = s.c_str();
    dbus_message_iter_append_basic(it, DBUS_TYPE_STRING, &p);
}

void append_status(DBusMessageIter* it, bool ok, const std::string& message) {
    const dbus_bool_t b = ok ? TRUE : FALSE;
    dbus_message_iter_append_basic(it, DBUS_TYPE_BOOLEAN, &b);
    append_string(it, message.empty() ? std::string(ok ? "OK" : "failed") : message);
}

// A Result as the reply (refused: status false) or as a dbus error (invalid). Returns
// what the method returns.
bool answer(const Result& r, DBusMessage* reply, DBusError* error) {
    if (r.verdict == Verdict::invalid) {
        dbus_set_error(error, DBUS_ERROR_INVALID_ARGS, "%s", r.message.c_str());
        return false;
    }
    DBusMessageIter it;
    dbus_message_iter_init_append(reply, &it);
    append_status(&it, r.verdict == Verdict::ok, r.message);
    return true;
}

// One {sv} entry of a dict.
template <class T> void dict_entry(DBusMessageIter* dict, const char* key, int type, T value) {
    DBusMessageIter entry, variant;
    const char signature[2] = {static_cast<char>(type), '\0'};
    dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, nullptr, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, signature, &variant);
    dbus_message_iter_append_basic(&variant, type, &value);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(dict, &entry);
}

void dict_string(DBusMessageIter* dict, const char* key, const std::string& s) {
    dict_entry(dict, key, DBUS_TYPE_STRING, s.c_str());
}
void dict_u64(DBusMessageIter* dict, const char* key, std::uint64_t v) {
    dict_entry(dict, key, DBUS_TYPE_UINT64, static_cast<dbus_uint64_t>(v));
}
void dict_u32(DBusMessageIter* dict, const char* key, std::uint32_t v) {
    dict_entry(dict, key, DBUS_TYPE_UINT32, static_cast<dbus_uint32_t>(v));
}
void dict_u16(DBusMessageIter* dict, const char* key, std::uint16_t v) {
    dict_entry(dict, key, DBUS_TYPE_UINT16, static_cast<dbus_uint16_t>(v));
}
void dict_i64(DBusMessageIter* dict, const char* key, std::int64_t v) {
    dict_entry(dict, key, DBUS_TYPE_INT64, static_cast<dbus_int64_t>(v));
}
void dict_bool(DBusMessageIter* dict, const char* key, bool v) {
    dict_entry(dict, key, DBUS_TYPE_BOOLEAN, static_cast<dbus_bool_t>(v ? TRUE : FALSE));
}

void append_data_servers(DBusMessageIter* it, const std::vector<DataServerRow>& rows) {
    DBusMessageIter array;
    dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, "a{sv}", &array);
    for (const DataServerRow& r : rows) {
        DBusMessageIter dict;
        dbus_message_iter_open_container(&array, DBUS_TYPE_ARRAY, "{sv}", &dict);
        dict_u64(&dict, "id", r.id);
        dict_string(&dict, "address", r.address);
        dict_u16(&dict, "nfs_port", r.nfs_port);
        dict_u16(&dict, "mnt_port", r.mnt_port);
        dict_string(&dict, "export_path", r.export_path);
        dict_u32(&dict, "rsize", r.rsize);
        dict_u32(&dict, "wsize", r.wsize);
        dict_string(&dict, "state", r.state);
        dict_bool(&dict, "drained", r.drained);
        dict_string(&dict, "connection", r.connection);
        dict_string(&dict, "deviceid", r.deviceid);
        dict_u64(&dict, "data_files", r.data_files);
        dict_u64(&dict, "stale_data_files", r.stale_data_files);
        dict_u64(&dict, "creates_pending", r.creates_pending);
        dict_u64(&dict, "removals_pending", r.removals_pending);
        dict_u64(&dict, "requests", r.requests);
        dict_u64(&dict, "errors", r.errors);
        dict_u64(&dict, "timeouts", r.timeouts);
        dict_u64(&dict, "reported_errors", r.reported_errors);
        dict_u64(&dict, "probes", r.probes);
        dict_u64(&dict, "probe_failures", r.probe_failures);
        dict_u64(&dict, "connects", r.connects);
        dict_u64(&dict, "connect_failures", r.connect_failures);
        dict_u32(&dict, "in_flight", r.in_flight);
        dict_i64(&dict, "last_probe_ms", r.last_probe_ms);
        dict_bool(&dict, "last_probe_ok", r.last_probe_ok);
        dict_u64(&dict, "last_probe_rtt_us", r.last_probe_rtt_us);
        dbus_message_iter_close_container(&array, &dict);
    }
    dbus_message_iter_close_container(it, &array);
}

void append_counters(DBusMessageIter* it, const Counters& counters) {
    DBusMessageIter dict;
    dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, "{st}", &dict);
    for (const auto& [name, value] : counters) {
        DBusMessageIter entry;
        const char* key = name.c_str();
        const dbus_uint64_t v = value;
        dbus_message_iter_open_container(&dict, DBUS_TYPE_DICT_ENTRY, nullptr, &entry);
        dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
        dbus_message_iter_append_basic(&entry, DBUS_TYPE_UINT64, &v);
        dbus_message_iter_close_container(&dict, &entry);
    }
    dbus_message_iter_close_container(it, &dict);
}

// Exceptions never reach Ganesha's dbus loop.
template <class Body> bool guarded(DBusError* error, Body&& body) noexcept {
    try {
        return body();
    } catch (const std::exception& e) {
        dbus_set_error(error, DBUS_ERROR_FAILED, "FLEXFILES: %s", e.what());
    } catch (...) {
        dbus_set_error(error, DBUS_ERROR_FAILED, "FLEXFILES: unexpected error");
    }
    return false;
}

struct ExportSummary {
    std::uint16_t id = 0;
    std::uint32_t data_servers = 0;
    std::uint32_t mirrors = 0;
};

bool collect_export(fsal_export* exp_hdl, void* arg) {
    auto* out = static_cast<std::vector<ExportSummary>*>(arg);
    Export* exp = Export::of(exp_hdl);
    // Exports still being created have no fleet yet.
    if (!exp->fleet_)
        return false;
    out->push_back({exp_hdl->export_id, static_cast<std::uint32_t>(exp->fleet().size()),
                    exp->settings.mirrors});
    return false;
}

bool drain_method(DBusMessageIter* args, DBusMessage* reply, DBusError* error, bool drained) {
    return guarded(error, [&] {
        Args a(args, error);
        std::uint16_t export_id = 0;
        std::uint32_t ds_id = 0;
        if (!a.u16("export_id", export_id) || !a.u32("ds_id", ds_id) || !a.end())
            return false;
        ExportRef exp;
        if (!exp.get(export_id, error))
            return false;
        return answer(set_drained(*exp, ds_id, drained), reply, error);
    });
}

} // namespace
} // namespace flexfiles::mgmt

using namespace flexfiles::mgmt;

extern "C" bool ff_mgmt_list_exports(DBusMessageIter* args, DBusMessage* reply, DBusError* error) {
    return guarded(error, [&] {
        Args a(args, error);
        if (!a.end())
            return false;
        std::vector<ExportSummary> exports;
        ff_layout_find_export(&flexfiles::the_module, collect_export, &exports);
        DBusMessageIter it, array;
        dbus_message_iter_init_append(reply, &it);
        append_status(&it, true, std::to_string(exports.size()) + " FLEXFILES export(s)");
        dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "(qsuu)", &array);
        for (const ExportSummary& e : exports) {
            char path[4096];
            ff_mgmt_export_path(e.id, path, sizeof(path));
            DBusMessageIter st;
            const char* p = path;
            dbus_message_iter_open_container(&array, DBUS_TYPE_STRUCT, nullptr, &st);
            dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT16, &e.id);
            dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &p);
            dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT32, &e.data_servers);
            dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT32, &e.mirrors);
            dbus_message_iter_close_container(&array, &st);
        }
        dbus_message_iter_close_container(&it, &array);
        return true;
    });
}

extern "C" bool ff_mgmt_list_data_servers(DBusMessageIter* args, DBusMessage* reply,
                                          DBusError* error) {
    return guarded(error, [&] {
        Args a(args, error);
        std::uint16_t export_id = 0;
        if (!a.u16("export_id", export_id) || !a.end())
            return false;
        ExportRef exp;
        if (!exp.get(export_id, error))
            return false;
        std::vector<DataServerRow> rows;
        const Result r = list_data_servers(*exp, rows);
        DBusMessageIter it;
        dbus_message_iter_init_append(reply, &it);
        append_status(&it, r.verdict == Verdict::ok, r.message);
        append_data_servers(&it, rows);
        return true;
    });
}

extern "C" bool ff_mgmt_get_stats(DBusMessageIter* args, DBusMessage* reply, DBusError* error) {
    return guarded(error, [&] {
        Args a(args, error);
        std::uint16_t export_id = 0;
        if (!a.u16("export_id", export_id) || !a.end())
            return false;
        ExportRef exp;
        if (!exp.get(export_id, error))
            return false;
        const Counters counters = stats(*exp);
        DBusMessageIter it;
        dbus_message_iter_init_append(reply, &it);
        append_status(&it, true, "OK");
        append_counters(&it, counters);
        return true;
    });
}

extern "C" bool ff_mgmt_get_policy(DBusMessageIter* args, DBusMessage* reply, DBusError* error) {
    return guarded(error, [&] {
        Args a(args, error);
        std::uint16_t export_id = 0;
        if (!a.u16("export_id", export_id) || !a.end())
            return false;
        ExportRef exp;
        if (!exp.get(export_id, error))
            return false;
        const PolicyValues p = policy(*exp);
        DBusMessageIter it;
        dbus_message_iter_init_append(reply, &it);
        append_status(&it, true, "OK");
        const dbus_bool_t trust = p.trust_wcc ? TRUE : FALSE;
        dbus_message_iter_append_basic(&it, DBUS_TYPE_BOOLEAN, &trust);
        dbus_message_iter_append_basic(&it, DBUS_TYPE_UINT32, &p.wcc_max_age_ms);
        dbus_message_iter_append_basic(&it, DBUS_TYPE_UINT32, &p.ds_getattr_deadline_ms);
        return true;
    });
}

extern "C" bool ff_mgmt_set_policy(DBusMessageIter* args, DBusMessage* reply, DBusError* error) {
    return guarded(error, [&] {
        Args a(args, error);
        std::uint16_t export_id = 0;
        PolicyValues p;
        if (!a.u16("export_id", export_id) || !a.boolean("trust_wcc", p.trust_wcc) ||
            !a.u32("wcc_max_age_ms", p.wcc_max_age_ms) ||
            !a.u32("ds_getattr_deadline_ms", p.ds_getattr_deadline_ms) || !a.end())
            return false;
        ExportRef exp;
        if (!exp.get(export_id, error))
            return false;
        return answer(set_policy(*exp, p), reply, error);
    });
}

extern "C" bool ff_mgmt_drain_data_server(DBusMessageIter* args, DBusMessage* reply,
                                          DBusError* error) {
    return drain_method(args, reply, error, true);
}

extern "C" bool ff_mgmt_undrain_data_server(DBusMessageIter* args, DBusMessage* reply,
                                            DBusError* error) {
    return drain_method(args, reply, error, false);
}

extern "C" bool ff_mgmt_add_data_server(DBusMessageIter* args, DBusMessage* reply,
                                        DBusError* error) {
    return guarded(error, [&] {
        Args a(args, error);
        std::uint16_t export_id = 0;
        std::string block;
        if (!a.u16("export_id", export_id) || !a.string("block", block) || !a.end())
            return false;
        ExportRef exp;
        if (!exp.get(export_id, error))
            return false;
        return answer(add_data_server(*exp, block), reply, error);
    });
}

extern "C" bool ff_mgmt_remove_data_server(DBusMessageIter* args, DBusMessage* reply,
                                           DBusError* error) {
    return guarded(error, [&] {
        Args a(args, error);
        std::uint16_t export_id = 0;
        std::uint32_t ds_id = 0;
        if (!a.u16("export_id", export_id) || !a.u32("ds_id", ds_id) || !a.end())
            return false;
        ExportRef exp;
        if (!exp.get(export_id, error))
            return false;
        return answer(remove_data_server(*exp, ds_id), reply, error);
    });
}

extern "C" bool ff_mgmt_flush_cache(DBusMessageIter* args, DBusMessage* reply, DBusError* error) {
    return guarded(error, [&] {
        Args a(args, error);
        std::uint16_t export_id = 0;
        std::string path;
        if (!a.u16("export_id", export_id) || !a.string("path", path) || !a.end())
            return false;
        ExportRef exp;
        if (!exp.get(export_id, error))
            return false;
        if (path.empty())
            return answer(flush_cache_all(*exp), reply, error);
        std::uint64_t file_id = 0;
        char why[512] = "";
        const int rc = ff_mgmt_lookup_fileid(exp.ref(), path.c_str(), &file_id, why, sizeof(why));
        if (rc != 0)
            return answer(Result::invalid("path " + path + ": " + why), reply, error);
        return answer(flush_cache_file(*exp, file_id, path), reply, error);
    });
}
