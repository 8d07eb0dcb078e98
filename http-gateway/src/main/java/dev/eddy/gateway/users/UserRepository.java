package dev.eddy.gateway.users;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.Optional;
import java.util.UUID;

/** Users by id or uuid, as embedded objects. */
public final class UserRepository {
    private static final String BY_ID = "SELECT " + User.columns("u") + " FROM users u WHERE u.id = $1";
    /** A user who belongs to the project's organization: the only users a dashboard may name. */
    private static final String IN_PROJECT_BY_UUID = "SELECT " + User.columns("u") + " FROM users u "
            + "JOIN organization_memberships m ON m.user_id = u.id "
            + "JOIN projects p ON p.organization_id = m.organization_id AND p.id = $1 WHERE u.uuid = $2";

    private final Pool pool;

    public UserRepository(final Pool pool) {
        this.pool = pool;
    }

    public Future<Optional<User>> byId(final long id) {
        return pool.preparedQuery(BY_ID).execute(Tuple.of(id))
                .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(User.from(rows.iterator().next(), "u")));
    }

    public Future<Optional<User>> inProject(final long projectId, final UUID uuid) {
        return pool.preparedQuery(IN_PROJECT_BY_UUID).execute(Tuple.of(projectId, uuid))
                .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(User.from(rows.iterator().next(), "u")));
    }
}
