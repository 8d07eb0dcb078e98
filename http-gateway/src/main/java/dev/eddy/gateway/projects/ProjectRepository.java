package dev.eddy.gateway.projects;

import dev.eddy.gateway.auth.Principal;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Projects a principal may see: those of organizations its user belongs to, narrowed by the key's project scope. */
public final class ProjectRepository {
    private static final String COLUMNS = "p.id, p.uuid, p.organization_id, p.name, p.api_token, p.timezone, "
            + "p.week_start_day, p.created_at, p.updated_at";
    private static final String VISIBLE = " FROM projects p JOIN organization_memberships m "
            + "ON m.organization_id = p.organization_id AND m.user_id = $1 "
            + "WHERE ($2::bigint[] IS NULL OR p.id = ANY($2))";
    private static final String COUNT = "SELECT count(*)" + VISIBLE;
    private static final String PAGE = "SELECT " + COLUMNS + VISIBLE + " ORDER BY p.id LIMIT $3 OFFSET $4";
    private static final String ONE = "SELECT " + COLUMNS + VISIBLE + " AND p.id = $3";
    private static final String BY_TOKEN = "SELECT id FROM projects WHERE api_token = $1";

    private final Pool pool;

    public ProjectRepository(final Pool pool) {
        this.pool = pool;
    }

    /**
     * A page of visible projects.
     *
     * @param total    how many are visible in all
     * @param projects this page
     */
    public record Page(long total, List<Project> projects) {
    }

    public Future<Page> list(final Principal who, final int limit, final int offset) {
        final Long[] scoped = scopedProjects(who);
        return pool.preparedQuery(COUNT).execute(Tuple.tuple().addLong(who.userId()).addArrayOfLong(scoped))
                .compose(count -> pool.preparedQuery(PAGE).execute(Tuple.of(who.userId(), scoped, limit, offset))
                        .map(rows -> {
                            final List<Project> projects = new ArrayList<>(rows.size());
                            rows.forEach(row -> projects.add(toProject(row)));
                            return new Page(count.iterator().next().getLong(0), projects);
                        }));
    }

    public Future<Optional<Project>> find(final Principal who, final long projectId) {
        return pool.preparedQuery(ONE).execute(Tuple.of(who.userId(), scopedProjects(who), projectId))
                .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(toProject(rows.iterator().next())));
    }

    /** The project, or a failed future with a 404 when the principal may not see it (or it does not exist). */
    public Future<Project> require(final Principal who, final long projectId) {
        return find(who, projectId).compose(p -> p.isPresent() ? Future.succeededFuture(p.get())
                : Future.failedFuture(dev.eddy.gateway.http.ApiError.notFound("Not found.")));
    }

    /** The project a project API key belongs to. */
    public Future<Optional<Long>> idForToken(final String token) {
        return pool.preparedQuery(BY_TOKEN).execute(Tuple.of(token))
                .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(rows.iterator().next().getLong("id")));
    }

    private static Long[] scopedProjects(final Principal who) {
        return who.scopedProjects().map(p -> p.toArray(Long[]::new)).orElse(null);
    }

    private static Project toProject(final Row row) {
        return new Project(
                row.getLong("id"),
                row.getUUID("uuid"),
                row.getUUID("organization_id"),
                row.getString("name"),
                row.getString("api_token"),
                row.getString("timezone"),
                row.getInteger("week_start_day"),
                row.getOffsetDateTime("created_at"),
                row.getOffsetDateTime("updated_at"));
    }
}
