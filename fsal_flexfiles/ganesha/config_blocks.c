// SPDX-License-Identifier: LGPL-3.0-or-later
/*
 * Ganesha config_item tables for the FLEXFILES export block.
 *
 * These tables are written in C because Ganesha's CONF_ITEM_* macros use
 * nested designators (.u.blk.init = ...) that C++20 does not accept; see
 * shim.h for the rest of the C/C++ boundary. Everything here is
 * declarative: the fields, their defaults, and the allocation of one struct per
 * Data_Server block. Allowed ranges and the rules that span fields are
 * checked on the C++ side (config.cpp), where the log lines name the
 * export, the block and the field.
 */
#include "config.h" /* Ganesha's build configuration, first as in Ganesha */
/* then the rest */
#include "abstract_mem.h"
#include "config_blocks.h"
#include "config_parsing.h"
#include "fsal.h"

#include <stddef.h>
#include <string.h>

/* Data_Server blocks collect here, in file order, while the parser runs. */
struct ff_data_server_list {
	struct ff_cfg_data_server *head;
	struct ff_cfg_data_server **tail;
};

/*
 * What load_config_from_node() fills: Ganesha's sub-FSAL arguments (the
 * layout subfsal_commit expects), the Data_Server list, and the rest.
 */
struct ff_export_block {
	struct subfsal_args subfsal;
	struct ff_data_server_list data_servers;
	struct ff_cfg_export cfg;
};

static void free_data_server(struct ff_cfg_data_server *ds)
{
	gsh_free(ds->address);
	gsh_free(ds->export_path);
	gsh_free(ds);
}

/*
 * Ganesha's three-way block init (config_parsing.h): defaults for the list
 * head, allocation of one Data_Server, or release of one after an error.
 */
static void *data_server_init(void *link_mem, void *self_struct)
{
	if (link_mem == NULL) {
		struct ff_data_server_list *list = self_struct;

		list->head = NULL;
		list->tail = &list->head;
		return list;
	}
	if (self_struct == NULL)
		return gsh_calloc(1, sizeof(struct ff_cfg_data_server));

	free_data_server(self_struct);
	return NULL;
}

static int data_server_commit(void *node, void *link_mem, void *self_struct,
			      struct config_error_type *err_type)
{
	struct ff_data_server_list *list = link_mem;
	struct ff_cfg_data_server *ds = self_struct;

	(void)node;
	(void)err_type;
	ds->next = NULL;
	*list->tail = ds;
	list->tail = &ds->next;
	return 0;
}

/*
 * Ranges here are the types' own: the allowed ranges are checked by
 * flexfiles::config::validate(), whose messages name the export, the block
 * and the field (the parser's "(4) is out of range" names none of them).
 */
static struct config_item data_server_params[] = {
	CONF_ITEM_UI32("Id", 0, UINT32_MAX, 0, ff_cfg_data_server, id),
	CONF_ITEM_STR("Address", 1, FF_CFG_ADDRESS_MAX, NULL,
		      ff_cfg_data_server, address),
	CONF_ITEM_UI16("NFS_Port", 0, UINT16_MAX, FF_CFG_NFS_PORT_DEFAULT,
		       ff_cfg_data_server, nfs_port),
	CONF_ITEM_UI16("MNT_Port", 0, UINT16_MAX, FF_CFG_MNT_PORT_DEFAULT,
		       ff_cfg_data_server, mnt_port),
	CONF_ITEM_PATH("Export_Path", 1, FF_CFG_PATH_MAX, NULL,
		       ff_cfg_data_server, export_path),
	CONF_ITEM_UI32("Rsize", 0, UINT32_MAX, FF_CFG_IO_SIZE_DEFAULT,
		       ff_cfg_data_server, rsize),
	CONF_ITEM_UI32("Wsize", 0, UINT32_MAX, FF_CFG_IO_SIZE_DEFAULT,
		       ff_cfg_data_server, wsize),
	CONFIG_EOL
};

static struct config_item sub_fsal_params[] = {
	CONF_ITEM_STR("name", 1, 32, NULL, subfsal_args, name),
	CONFIG_EOL,
};

static struct config_item export_params[] = {
	CONF_ITEM_NOOP("name"),
	/*
	 * The metadata FSAL: exactly one nested FSAL block. Its other
	 * parameters belong to the sub-FSAL, hence RELAX.
	 */
	{ .name = "FSAL",
	  .type = CONFIG_BLOCK,
	  .flags = CONFIG_RELAX | CONFIG_UNIQUE,
	  .u.blk.init = noop_conf_init,
	  .u.blk.params = sub_fsal_params,
	  .u.blk.commit = subfsal_commit,
	  .off = offsetof(struct ff_export_block, subfsal) },
	CONF_ITEM_BLOCK("Data_Server", data_server_params, data_server_init,
			data_server_commit, ff_export_block, data_servers),
	CONF_ITEM_UI32("Mirrors", 0, UINT32_MAX, FF_CFG_MIRRORS_DEFAULT,
		       ff_export_block, cfg.mirrors),
	CONF_ITEM_UI64("Stripe_Unit", 0, UINT64_MAX, FF_CFG_STRIPE_UNIT_DEFAULT,
		       ff_export_block, cfg.stripe_unit),
	CONF_ITEM_UI32("Fencing_Uid_Min", 0, UINT32_MAX,
		       FF_CFG_FENCING_ID_MIN_DEFAULT, ff_export_block,
		       cfg.fencing_uid_min),
	CONF_ITEM_UI32("Fencing_Uid_Max", 0, UINT32_MAX,
		       FF_CFG_FENCING_ID_MAX_DEFAULT, ff_export_block,
		       cfg.fencing_uid_max),
	CONF_ITEM_UI32("Fencing_Gid_Min", 0, UINT32_MAX,
		       FF_CFG_FENCING_ID_MIN_DEFAULT, ff_export_block,
		       cfg.fencing_gid_min),
	CONF_ITEM_UI32("Fencing_Gid_Max", 0, UINT32_MAX,
		       FF_CFG_FENCING_ID_MAX_DEFAULT, ff_export_block,
		       cfg.fencing_gid_max),
	CONF_ITEM_UI32("Fencing_Read_Uid", 0, UINT32_MAX,
		       FF_CFG_FENCING_READ_UID_DERIVED, ff_export_block,
		       cfg.fencing_read_uid),
	CONF_ITEM_BOOL("Trust_WCC", FF_CFG_TRUST_WCC_DEFAULT, ff_export_block,
		       cfg.trust_wcc),
	CONF_ITEM_UI32("WCC_Max_Age", 0, UINT32_MAX,
		       FF_CFG_WCC_MAX_AGE_MS_DEFAULT, ff_export_block,
		       cfg.wcc_max_age_ms),
	CONF_ITEM_UI32("WCC_Max_Ctime_Skew", 0, UINT32_MAX,
		       FF_CFG_WCC_MAX_CTIME_SKEW_S_DEFAULT, ff_export_block,
		       cfg.wcc_max_ctime_skew_s),
	CONF_ITEM_UI32("DS_Getattr_Deadline", 0, UINT32_MAX,
		       FF_CFG_DS_GETATTR_DEADLINE_MS_DEFAULT, ff_export_block,
		       cfg.ds_getattr_deadline_ms),
	CONF_ITEM_UI32("DS_IO_Timeout", 0, UINT32_MAX,
		       FF_CFG_DS_IO_TIMEOUT_MS_DEFAULT, ff_export_block,
		       cfg.ds_io_timeout_ms),
	CONF_ITEM_UI32("DS_Direct_Connections", 0, UINT32_MAX,
		       FF_CFG_DS_DIRECT_CONNECTIONS_DEFAULT, ff_export_block,
		       cfg.ds_direct_connections),
	CONF_ITEM_UI32("DS_Direct_Spin", 0, UINT32_MAX,
		       FF_CFG_DS_DIRECT_SPIN_US_DEFAULT, ff_export_block,
		       cfg.ds_direct_spin_us),
	CONF_ITEM_UI32("Resilver_Recall_After", 0, UINT32_MAX,
		       FF_CFG_RESILVER_RECALL_AFTER_MS_DEFAULT, ff_export_block,
		       cfg.resilver_recall_after_ms),
	CONF_ITEM_PATH("Layout_Store", 1, FF_CFG_PATH_MAX, NULL,
		       ff_export_block, cfg.layout_store),
	CONF_ITEM_BOOL("Map_In_Namespace", false, ff_export_block,
		       cfg.map_in_namespace),
	CONFIG_EOL
};

static struct config_block export_block = {
	.dbus_interface_name =
		"org.ganesha.nfsd.config.fsal.flexfiles-export%d",
	.blk_desc.name = "FSAL",
	.blk_desc.type = CONFIG_BLOCK,
	.blk_desc.u.blk.init = noop_conf_init,
	.blk_desc.u.blk.params = export_params,
	.blk_desc.u.blk.commit = noop_conf_commit,
};

int ff_cfg_export_load(void *parse_node, struct config_error_type *err_type,
		       struct ff_cfg_export *out)
{
	struct ff_export_block blk;
	int rc;

	memset(&blk, 0, sizeof(blk));
	blk.data_servers.tail = &blk.data_servers.head;

	rc = load_config_from_node(parse_node, &export_block, &blk, true,
				   err_type);

	*out = blk.cfg;
	out->sub_fsal_name = blk.subfsal.name;
	out->sub_fsal_node = blk.subfsal.fsal_node;
	out->data_servers = blk.data_servers.head;
	return rc == 0 ? 0 : -1;
}

void ff_cfg_export_release(struct ff_cfg_export *cfg)
{
	struct ff_cfg_data_server *ds = cfg->data_servers;

	while (ds != NULL) {
		struct ff_cfg_data_server *next = ds->next;

		free_data_server(ds);
		ds = next;
	}
	gsh_free(cfg->sub_fsal_name);
	gsh_free(cfg->layout_store);
	memset(cfg, 0, sizeof(*cfg));
}
