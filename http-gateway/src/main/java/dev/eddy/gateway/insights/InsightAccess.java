package dev.eddy.gateway.insights;

import dev.eddy.gateway.http.ApiError;
import io.vertx.sqlclient.Row;

/**
 * What a caller may do with an insight, derived from the dashboards it is on, as PostHog's
 * {@code UserInsightPermissions} derives it: an insight on no dashboard is editable by everyone in the project
 * (restriction 21, privilege 37); on dashboards, its restriction level is the highest of theirs, and the caller may
 * edit it when it may edit any one of them (a dashboard of level 21, or one it created, or one it collaborates on
 * with level 37, or any when it is an organization admin). {@code user_access_level} is PostHog's access-control
 * level, which does not look at dashboards: {@code manager} for the insight's creator and organization admins,
 * {@code editor} for everyone else.
 *
 * @param restrictionLevel PostHog's {@code effective_restriction_level}
 * @param privilegeLevel   PostHog's {@code effective_privilege_level}
 * @param userAccessLevel  PostHog's {@code user_access_level}
 */
public record InsightAccess(int restrictionLevel, int privilegeLevel, String userAccessLevel) {
    static final int CAN_VIEW = 21;
    static final int CAN_EDIT = 37;
    /** PostHog's organization admin level (owners are 15): admins edit every dashboard. */
    private static final int ORG_ADMIN = 8;

    /** PostHog's {@code CanEditInsight} refusal. */
    static ApiError refused() {
        return ApiError.forbidden("permission_denied", "This insight is on a dashboard that can only be edited by its owner, "
                + "team members invited to editing the dashboard, and project admins.");
    }

    /** The refusal of a change of the insight's dashboards, naming the one the caller may not edit. */
    static ApiError refusedDashboard(final boolean adding, final long dashboard) {
        return ApiError.forbidden("permission_denied", "You don't have permission to " + (adding ? "add insights to" : "remove insights from")
                + " dashboard: " + dashboard);
    }

    /**
     * Whether {@code caller} may edit dashboard {@code d} for its own sake (its level, creator, collaborators), an SQL
     * boolean; organization admins are added by {@link #adminOf}.
     */
    static String editsDashboard(final String caller) {
        return "(d.restriction_level < " + CAN_EDIT + " OR d.created_by = " + caller + " OR EXISTS (SELECT 1 FROM dashboard_collaborators c "
                + "WHERE c.dashboard_id = d.id AND c.user_id = " + caller + " AND c.level >= " + CAN_EDIT + "))";
    }

    /** Whether {@code caller} is an admin of the organization of project {@code project} (an SQL expression), an SQL boolean. */
    static String adminOf(final String caller, final String project) {
        return "COALESCE((SELECT m.level FROM organization_memberships m JOIN projects op ON op.organization_id = m.organization_id "
                + "WHERE op.id = " + project + " AND m.user_id = " + caller + "), 0) >= " + ORG_ADMIN;
    }

    /**
     * The columns {@link #of} reads, for insight {@code i} and caller {@code caller} (a placeholder): the highest
     * restriction level of its dashboards and whether the caller edits any of them (both null on no dashboard, live
     * tiles on live dashboards only, as PostHog's tile manager reads them), whether the caller is an organization
     * admin, and whether it created the insight.
     */
    static String columns(final String caller) {
        return "(SELECT max(d.restriction_level) FROM dashboard_tiles t JOIN dashboards d ON d.id = t.dashboard_id AND NOT d.deleted "
                + "WHERE t.insight_id = i.id AND NOT t.deleted) AS access_restriction, "
                + "(SELECT bool_or(" + editsDashboard(caller) + ") FROM dashboard_tiles t JOIN dashboards d ON d.id = t.dashboard_id "
                + "AND NOT d.deleted WHERE t.insight_id = i.id AND NOT t.deleted) AS access_edits, "
                + adminOf(caller, "i.project_id") + " AS access_admin, "
                + "COALESCE(i.created_by = " + caller + ", false) AS access_creator";
    }

    /** The access of a row selected with {@link #columns}. */
    static InsightAccess of(final Row row) {
        final Integer restriction = row.getInteger("access_restriction");
        final Boolean edits = row.getBoolean("access_edits");
        final boolean admin = row.getBoolean("access_admin");
        final boolean editable = admin || edits == null || edits;
        return new InsightAccess(restriction == null ? CAN_VIEW : restriction, editable ? CAN_EDIT : CAN_VIEW,
                admin || row.getBoolean("access_creator") ? "manager" : "editor");
    }

    public boolean canEdit() {
        return privilegeLevel >= CAN_EDIT;
    }
}
