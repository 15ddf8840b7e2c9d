// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The methods of org.ganesha.nfsd.flexfiles (/org/ganesha/nfsd/FlexFiles), with the
// signatures of dbus_glue.c's table: each one is its arguments, its operation (admin.hpp)
// and its out arguments. Reading the call, the export look-up, the errors and STATUS_REPLY
// are dbus_call.hpp's, the same for every method.
//
// They run on Ganesha's dbus thread, one at a time.
#include "dbus/dbus_call.hpp"
#include "ganesha/sal_shim.h"
#include "model/naming.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace flexfiles::mgmt {
namespace {

// ---- Out arguments ----

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
        dict_u64(&dict, "direct_writes", r.direct_writes);
        dict_u64(&dict, "direct_spun", r.direct_spun);
        dict_u64(&dict, "direct_reads", r.direct_reads);
        dict_u32(&dict, "direct_connections", r.direct_connections);
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

struct ExportSummary {
    std::uint16_t id = 0;
    std::uint32_t data_servers = 0;
    std::uint32_t mirrors = 0;
    std::string identity; // the layout store's, 16 hex digits (model/naming.hpp)
};

bool collect_export(fsal_export* exp_hdl, void* arg) {
    auto* out = static_cast<std::vector<ExportSummary>*>(arg);
    Export* exp = Export::of(exp_hdl);
    // Exports still being created have no fleet yet.
    if (!exp->fleet_)
        return false;
    out->push_back({exp_hdl->export_id, static_cast<std::uint32_t>(exp->fleet().size()),
                    exp->settings.mirrors, fleet::identity_hex(exp->store().identity())});
    return false;
}

void append_exports(DBusMessageIter* it, const std::vector<ExportSummary>& exports) {
    DBusMessageIter array;
    dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, "(qsuus)", &array);
    for (const ExportSummary& e : exports) {
        char path[4096];
        ff_mgmt_export_path(e.id, path, sizeof(path));
        DBusMessageIter st;
        const char* p = path;
        const char* identity = e.identity.c_str();
        dbus_message_iter_open_container(&array, DBUS_TYPE_STRUCT, nullptr, &st);
        dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT16, &e.id);
        dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &p);
        dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT32, &e.data_servers);
        dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT32, &e.mirrors);
        dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &identity);
        dbus_message_iter_close_container(&array, &st);
    }
    dbus_message_iter_close_container(it, &array);
}

void append_policy(DBusMessageIter* it, const PolicyValues& p) {
    const dbus_bool_t trust = p.trust_wcc ? TRUE : FALSE;
    dbus_message_iter_append_basic(it, DBUS_TYPE_BOOLEAN, &trust);
    dbus_message_iter_append_basic(it, DBUS_TYPE_UINT32, &p.wcc_max_age_ms);
    dbus_message_iter_append_basic(it, DBUS_TYPE_UINT32, &p.ds_getattr_deadline_ms);
}

// ---- Methods ----

// DrainDataServer and UndrainDataServer, which differ only in the flag.
bool drain_method(DBusMessageIter* args, DBusMessage* reply, DBusError* error, bool drained) {
    std::uint32_t ds_id = 0;
    return on_export(
        args, error, [&](Args& a) { return a.u32("ds_id", ds_id); },
        [&](ExportRef& exp) { return answer(set_drained(*exp, ds_id, drained), reply, error); });
}

} // namespace
} // namespace flexfiles::mgmt

using namespace flexfiles::mgmt;

extern "C" bool ff_mgmt_list_exports(DBusMessageIter* args, DBusMessage* reply, DBusError* error) {
    return call(args, error, no_more, [&] {
        std::vector<ExportSummary> exports;
        ff_layout_find_export(&flexfiles::the_module, collect_export, &exports);
        return answer(Result::ok(std::to_string(exports.size()) + " FLEXFILES export(s)"), reply,
                      error, [&](DBusMessageIter* it) { append_exports(it, exports); });
    });
}

extern "C" bool ff_mgmt_list_data_servers(DBusMessageIter* args, DBusMessage* reply,
                                          DBusError* error) {
    return on_export(args, error, no_more, [&](ExportRef& exp) {
        std::vector<DataServerRow> rows;
        const Result r = list_data_servers(*exp, rows);
        return answer(r, reply, error, [&](DBusMessageIter* it) { append_data_servers(it, rows); });
    });
}

extern "C" bool ff_mgmt_get_stats(DBusMessageIter* args, DBusMessage* reply, DBusError* error) {
    return on_export(args, error, no_more, [&](ExportRef& exp) {
        const Counters counters = stats(*exp);
        return answer(Result::ok("OK"), reply, error,
                      [&](DBusMessageIter* it) { append_counters(it, counters); });
    });
}

extern "C" bool ff_mgmt_get_policy(DBusMessageIter* args, DBusMessage* reply, DBusError* error) {
    return on_export(args, error, no_more, [&](ExportRef& exp) {
        const PolicyValues p = policy(*exp);
        return answer(Result::ok("OK"), reply, error,
                      [&](DBusMessageIter* it) { append_policy(it, p); });
    });
}

extern "C" bool ff_mgmt_set_policy(DBusMessageIter* args, DBusMessage* reply, DBusError* error) {
    PolicyValues p;
    return on_export(
        args, error,
        [&](Args& a) {
            return a.boolean("trust_wcc", p.trust_wcc) &&
                   a.u32("wcc_max_age_ms", p.wcc_max_age_ms) &&
                   a.u32("ds_getattr_deadline_ms", p.ds_getattr_deadline_ms);
        },
        [&](ExportRef& exp) { return answer(set_policy(*exp, p), reply, error); });
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
    std::string block;
    return on_export(
        args, error, [&](Args& a) { return a.string("block", block); },
        [&](ExportRef& exp) { return answer(add_data_server(*exp, block), reply, error); });
}

extern "C" bool ff_mgmt_remove_data_server(DBusMessageIter* args, DBusMessage* reply,
                                           DBusError* error) {
    std::uint32_t ds_id = 0;
    return on_export(
        args, error, [&](Args& a) { return a.u32("ds_id", ds_id); },
        [&](ExportRef& exp) { return answer(remove_data_server(*exp, ds_id), reply, error); });
}

extern "C" bool ff_mgmt_flush_cache(DBusMessageIter* args, DBusMessage* reply, DBusError* error) {
    std::string path;
    return on_export(
        args, error, [&](Args& a) { return a.string("path", path); },
        [&](ExportRef& exp) {
            if (path.empty())
                return answer(flush_cache_all(*exp), reply, error);
            std::uint64_t file_id = 0;
            char why[512] = "";
            const int rc =
                ff_mgmt_lookup_fileid(exp.ref(), path.c_str(), &file_id, why, sizeof(why));
            if (rc != 0)
                return answer(Result::invalid("path " + path + ": " + why), reply, error);
            return answer(flush_cache_file(*exp, file_id, path), reply, error);
        });
}
