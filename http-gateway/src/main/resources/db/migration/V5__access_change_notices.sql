-- Every change to what decides who may do what (personal API keys, users, organization memberships, projects) is
-- announced on the channel eddy_access when its transaction commits, so gateways that keep lookups of keys and
-- projects in memory drop them at once (dev.eddy.gateway.auth.AccessChanges). Statement-level: one notice per
-- statement, and PostgreSQL folds equal notices of one transaction into one.
CREATE FUNCTION eddy_notify_access_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('eddy_access', TG_TABLE_NAME);
    RETURN NULL;
END;
$$;

CREATE TRIGGER personal_api_keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON personal_api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION eddy_notify_access_change();
CREATE TRIGGER users_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION eddy_notify_access_change();
CREATE TRIGGER organization_memberships_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON organization_memberships
    FOR EACH STATEMENT EXECUTE FUNCTION eddy_notify_access_change();
CREATE TRIGGER projects_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON projects
    FOR EACH STATEMENT EXECUTE FUNCTION eddy_notify_access_change();
