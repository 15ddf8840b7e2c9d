// SPDX-License-Identifier: LGPL-3.0-or-later
/*
 * The FLEXFILES dbus interface as Ganesha's dbus server sees it: the method
 * table (gsh_dbus_method uses flexible array members, which C++ cannot
 * initialise), its registration, and look-ups through export_mgr.h.
 *
 * When to register. gsh_dbus_register_path needs Ganesha's dbus connection,
 * made by gsh_dbus_pkginit() in nfs_Init(); FSALs are loaded and exports
 * created before that (ReadExports runs before nfs_start), so neither the
 * module constructor nor create_export can register. Ganesha's own late
 * registrations run from init code that is ordered after gsh_dbus_pkginit
 * (ExportMgr, ClientMgr, CacheMgr in nfs_Init; "admin" from the admin
 * thread's init), which a module cannot join. So the first create_export
 * starts one thread that waits for nfs_init_complete() (the end of
 * nfs_start, after nfs_Init and after the dbus thread has started), the way
 * FSAL_GPFS's up-call thread waits with nfs_init_wait_timeout, and then
 * registers. Registering while the dbus thread runs is what the admin thread
 * does too: libdbus (>= 1.7) is thread-safe without set-up. The thread checks
 * a stop flag every second, so unloading the module (or a server that fails
 * before init completes) never leaves it running in unmapped code.
 * gsh_dbus_pkgshutdown unregisters the path before FSALs are unloaded.
 */
#include "dbus_glue.h"

#include "config.h" /* Ganesha's build configuration, first as in Ganesha */
#include "export_mgr.h"
#include "fsal.h"
#include "gsh_dbus.h"
#include "log.h"
#include "nfs_exports.h"
#include "nfs_init.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/*
 * One method of the table: its name in the interface, the function, and its
 * arguments as Introspect lists them; every method's out arguments start with
 * STATUS_REPLY, as Ganesha's own do. Ganesha writes each struct out; a macro
 * here keeps the ten from repeating the same five lines.
 */
#define FF_METHOD(var, dbus_name, function, ...)			\
	static struct gsh_dbus_method var = {				\
		.name = dbus_name,					\
		.method = function,					\
		.args = { __VA_ARGS__, END_ARG_LIST },			\
	}
#define FF_IN(arg_name, signature)					\
	{ .name = arg_name, .type = signature, .direction = "in" }
#define FF_OUT(arg_name, signature)					\
	{ .name = arg_name, .type = signature, .direction = "out" }
#define FF_EXPORT_ID_IN FF_IN("export_id", "q")
#define FF_DS_ID_IN FF_IN("ds_id", "u")

FF_METHOD(list_exports, "ListExports", ff_mgmt_list_exports, STATUS_REPLY,
	  FF_OUT("exports", "a(qsuus)"));
FF_METHOD(list_data_servers, "ListDataServers", ff_mgmt_list_data_servers,
	  FF_EXPORT_ID_IN, STATUS_REPLY, FF_OUT("data_servers", "aa{sv}"));
FF_METHOD(get_stats, "GetStats", ff_mgmt_get_stats, FF_EXPORT_ID_IN,
	  STATUS_REPLY, FF_OUT("counters", "a{st}"));
FF_METHOD(get_policy, "GetPolicy", ff_mgmt_get_policy, FF_EXPORT_ID_IN,
	  STATUS_REPLY, FF_OUT("trust_wcc", "b"), FF_OUT("wcc_max_age_ms", "u"),
	  FF_OUT("ds_getattr_deadline_ms", "u"));
FF_METHOD(set_policy, "SetPolicy", ff_mgmt_set_policy, FF_EXPORT_ID_IN,
	  FF_IN("trust_wcc", "b"), FF_IN("wcc_max_age_ms", "u"),
	  FF_IN("ds_getattr_deadline_ms", "u"), STATUS_REPLY);
FF_METHOD(drain_data_server, "DrainDataServer", ff_mgmt_drain_data_server,
	  FF_EXPORT_ID_IN, FF_DS_ID_IN, STATUS_REPLY);
FF_METHOD(undrain_data_server, "UndrainDataServer", ff_mgmt_undrain_data_server,
	  FF_EXPORT_ID_IN, FF_DS_ID_IN, STATUS_REPLY);
FF_METHOD(add_data_server, "AddDataServer", ff_mgmt_add_data_server,
	  FF_EXPORT_ID_IN, FF_IN("block", "s"), STATUS_REPLY);
FF_METHOD(remove_data_server, "RemoveDataServer", ff_mgmt_remove_data_server,
	  FF_EXPORT_ID_IN, FF_DS_ID_IN, STATUS_REPLY);
FF_METHOD(flush_cache, "FlushCache", ff_mgmt_flush_cache, FF_EXPORT_ID_IN,
	  FF_IN("path", "s"), STATUS_REPLY);

static struct gsh_dbus_method *flexfiles_methods[] = {
	&list_exports,
	&list_data_servers,
	&get_stats,
	&get_policy,
	&set_policy,
	&drain_data_server,
	&undrain_data_server,
	&add_data_server,
	&remove_data_server,
	&flush_cache,
	NULL
};

static struct gsh_dbus_interface flexfiles_interface = {
	.name = FF_MGMT_DBUS_INTERFACE,
	.props = NULL,
	.methods = flexfiles_methods,
	.signals = NULL,
};

static struct gsh_dbus_interface *flexfiles_interfaces[] = {
	&flexfiles_interface,
	NULL
};

/* ------------------------------------------------------------------------- */
/* Deferred registration */

static pthread_mutex_t registrar_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t registrar_thread;
static bool registrar_started;
static bool registrar_stopping;

static bool stopping(void)
{
	bool stop;

	pthread_mutex_lock(&registrar_lock);
	stop = registrar_stopping;
	pthread_mutex_unlock(&registrar_lock);
	return stop;
}

static void *registrar(void *arg)
{
	int rc;

	(void)arg;
	SetNameFunction("ff_dbus_reg");
	for (;;) {
		if (stopping())
			return NULL;
		rc = nfs_init_wait_timeout(1);
		if (rc == 0)
			break;
		if (rc != ETIMEDOUT) {
			LogWarn(COMPONENT_DBUS,
				"FLEXFILES: waiting for the server's initialisation failed (%d); the dbus interface %s is not available",
				rc, FF_MGMT_DBUS_INTERFACE);
			return NULL;
		}
	}
	if (stopping())
		return NULL;
	/*
	 * Without a bus Ganesha logs that there is no connection and returns 0,
	 * as it does for its own interfaces; 1 is success.
	 */
	rc = gsh_dbus_register_path(FF_MGMT_DBUS_NAME, flexfiles_interfaces);
	if (rc == 1)
		LogEvent(COMPONENT_DBUS,
			 "FLEXFILES: dbus interface %s registered on %s%s",
			 FF_MGMT_DBUS_INTERFACE, DBUS_PATH, FF_MGMT_DBUS_NAME);
	else
		LogEvent(COMPONENT_DBUS,
			 "FLEXFILES: dbus interface %s not registered (%d): no dbus connection; ganesha-ff cannot reach this server",
			 FF_MGMT_DBUS_INTERFACE, rc);
	return NULL;
}

void ff_mgmt_dbus_start(void)
{
	pthread_mutex_lock(&registrar_lock);
	if (!registrar_started && !registrar_stopping) {
		int rc = pthread_create(&registrar_thread, NULL, registrar,
					NULL);

		if (rc == 0)
			registrar_started = true;
		else
			LogCrit(COMPONENT_DBUS,
				"FLEXFILES: cannot start the dbus registration thread (%s); the dbus interface is not available",
				strerror(rc));
	}
	pthread_mutex_unlock(&registrar_lock);
}

void ff_mgmt_dbus_stop(void)
{
	bool join;

	pthread_mutex_lock(&registrar_lock);
	registrar_stopping = true;
	join = registrar_started;
	registrar_started = false;
	pthread_mutex_unlock(&registrar_lock);
	if (join)
		pthread_join(registrar_thread, NULL);
}

/* ------------------------------------------------------------------------- */
/* Look-ups */

struct fsal_export *ff_mgmt_export_get(uint16_t export_id,
				       struct fsal_module *fsal,
				       struct gsh_export **ref, bool *exists)
{
	struct gsh_export *exp = get_gsh_export(export_id);
	struct fsal_export *fexp;

	*ref = NULL;
	*exists = exp != NULL;
	if (exp == NULL)
		return NULL;
	/* The top of the stack is MDCACHE's; ours is below it. */
	for (fexp = exp->fsal_export; fexp != NULL; fexp = fexp->sub_export) {
		if (fexp->fsal == fsal) {
			*ref = exp;
			return fexp;
		}
	}
	put_gsh_export(exp);
	return NULL;
}

void ff_mgmt_export_put(struct gsh_export *ref)
{
	if (ref != NULL)
		put_gsh_export(ref);
}

void ff_mgmt_export_path(uint16_t export_id, char *buf, size_t len)
{
	struct gsh_export *exp = get_gsh_export(export_id);
	struct gsh_refstr *gr;

	if (len > 0)
		buf[0] = '\0';
	if (exp == NULL)
		return;
	/*
	 * Copied inside the read-side section: update_export replaces these
	 * strings and frees the old ones after a grace period.
	 */
	rcu_read_lock();
	gr = rcu_dereference(exp->pseudopath);
	if (gr == NULL)
		gr = rcu_dereference(exp->fullpath);
	if (gr != NULL)
		snprintf(buf, len, "%s", gr->gr_val);
	rcu_read_unlock();
	put_gsh_export(exp);
}

int ff_mgmt_lookup_fileid(struct gsh_export *ref, const char *path,
			  uint64_t *fileid, char *why, size_t why_len)
{
	struct req_op_context op_context;
	struct fsal_obj_handle *obj = NULL;
	fsal_status_t status;
	char *copy;
	char *component;
	char *save = NULL;
	int rc = 0;

	copy = gsh_strdup(path);
	/*
	 * The op context owns a reference of its own, which
	 * release_op_context puts.
	 */
	get_gsh_export_ref(ref);
	init_op_context_simple(&op_context, ref, ref->fsal_export);
	status = nfs_export_get_root_entry(ref, &obj);
	if (FSAL_IS_ERROR(status)) {
		snprintf(why, why_len, "cannot get the export's root: %s",
			 msg_fsal_err(status.major));
		rc = EIO;
		goto out;
	}
	/*
	 * One component at a time from the export's root, through MDCACHE, so
	 * the path cannot leave the export.
	 */
	for (component = strtok_r(copy, "/", &save); component != NULL;
	     component = strtok_r(NULL, "/", &save)) {
		struct fsal_obj_handle *next = NULL;

		if (strcmp(component, ".") == 0)
			continue;
		if (strcmp(component, "..") == 0) {
			snprintf(why, why_len,
				 "\"..\" is not allowed in a path");
			rc = EINVAL;
			goto out;
		}
		status = obj->obj_ops->lookup(obj, component, &next, NULL);
		if (FSAL_IS_ERROR(status)) {
			snprintf(why, why_len, "%s: %s", component,
				 msg_fsal_err(status.major));
			rc = status.major == ERR_FSAL_NOENT ? ENOENT : EIO;
			goto out;
		}
		obj->obj_ops->put_ref(obj);
		obj = next;
	}
	*fileid = obj->fileid;
out:
	if (obj != NULL)
		obj->obj_ops->put_ref(obj);
	release_op_context();
	gsh_free(copy);
	return rc;
}
