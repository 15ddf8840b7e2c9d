/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * The C side of the FLEXFILES dbus interface (dbus_glue.c): the interface
 * table Ganesha's dbus server dispatches from, its deferred registration,
 * and the export and path look-ups that need Ganesha headers which do not
 * compile as C++ (export_mgr.h; see ganesha/shim.h). The methods themselves
 * are C++ (dbus_methods.cpp) with the signature gsh_dbus_method expects.
 */
#ifndef FF_MGMT_DBUS_GLUE_H
#define FF_MGMT_DBUS_GLUE_H

#include <dbus/dbus.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fsal_module;
struct fsal_export;
struct gsh_export;

/*
 * Object path /org/ganesha/nfsd/FlexFiles,
 * interface org.ganesha.nfsd.flexfiles.
 */
#define FF_MGMT_DBUS_NAME "FlexFiles"
#define FF_MGMT_DBUS_INTERFACE "org.ganesha.nfsd.flexfiles"

/*
 * Registers the interface once Ganesha's dbus is initialised, from a thread
 * of its own (see dbus_glue.c for why). Idempotent: the first call starts the
 * thread, later ones do nothing.
 */
void ff_mgmt_dbus_start(void);
/* Stops that thread if it is still waiting (module unload). */
void ff_mgmt_dbus_stop(void);

/*
 * The export `export_id` if one of its FSAL exports belongs to `fsal`: that
 * FSAL export, with a reference on the gsh_export in *ref (give it back with
 * ff_mgmt_export_put). NULL (and *ref NULL) otherwise; *exists says whether
 * an export with that id exists at all.
 */
struct fsal_export *ff_mgmt_export_get(uint16_t export_id,
				       struct fsal_module *fsal,
				       struct gsh_export **ref, bool *exists);
void ff_mgmt_export_put(struct gsh_export *ref);

/* The export's Pseudo path, or its Path when it has none, copied into buf. */
void ff_mgmt_export_path(uint16_t export_id, char *buf, size_t len);

/*
 * The fileid of `path` in that export (relative to its root, or starting with
 * its Path or Pseudo path), looked up through the export's FSAL stack.
 * 0 on success; otherwise an errno and a message in why.
 */
int ff_mgmt_lookup_fileid(struct gsh_export *ref, const char *path,
			  uint64_t *fileid, char *why, size_t why_len);

/*
 * The methods (dbus_methods.cpp), all of one function type, the signature
 * of gsh_dbus_method's .method: the compiler checks the table in dbus_glue.c
 * and each C++ definition against it.
 */
typedef bool ff_mgmt_method(DBusMessageIter *args, DBusMessage *reply,
			    DBusError *error);

ff_mgmt_method ff_mgmt_list_exports;
ff_mgmt_method ff_mgmt_list_data_servers;
ff_mgmt_method ff_mgmt_get_stats;
ff_mgmt_method ff_mgmt_get_policy;
ff_mgmt_method ff_mgmt_set_policy;
ff_mgmt_method ff_mgmt_drain_data_server;
ff_mgmt_method ff_mgmt_undrain_data_server;
ff_mgmt_method ff_mgmt_add_data_server;
ff_mgmt_method ff_mgmt_remove_data_server;
ff_mgmt_method ff_mgmt_flush_cache;

#ifdef __cplusplus
}
#endif

#endif /* FF_MGMT_DBUS_GLUE_H */
