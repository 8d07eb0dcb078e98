package dev.eddy.gateway.auth;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.gateway.http.Responses;
import io.vertx.core.Future;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * {@code GET/POST /api/personal_api_keys/} and {@code DELETE /api/personal_api_keys/:id/}: the caller's own keys.
 * A new key's secret is in the creation answer only ({@code value}); Eddy keeps its SHA-256. A key can only
 * create keys with scopes it has itself, and revoking is immediate.
 */
public final class PersonalApiKeyRoutes {
    public static final String READ = "personal_api_key:read";
    public static final String WRITE = "personal_api_key:write";
    /** The objects scopes name; each has {@code :read} and {@code :write}. */
    static final Set<String> OBJECTS = Set.of("dashboard", "insight", "sharing_configuration", "activity_log", "person", "group",
            "feature_flag", "action", "cohort", "project", "user", "personal_api_key", "query");
    private static final String BASE = "/api/personal_api_keys";
    private static final String COLUMNS = "id, label, mask_value, scopes, scoped_projects, created_at, last_used_at";
    private static final String LIST = "SELECT " + COLUMNS + " FROM personal_api_keys WHERE user_id = $1 AND revoked_at IS NULL "
            + "ORDER BY created_at, id";
    private static final String INSERT = "INSERT INTO personal_api_keys (id, user_id, label, secure_value, mask_value, scopes, "
            + "scoped_projects) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING " + COLUMNS;
    private static final String REVOKE = "UPDATE personal_api_keys SET revoked_at = now() WHERE id = $1 AND user_id = $2 "
            + "AND revoked_at IS NULL";

    private final Pool pool;
    private final AccessChanges changes;

    /** @param changes told of each key revoked here, so this process stops taking it at once */
    public PersonalApiKeyRoutes(final Pool pool, final AccessChanges changes) {
        this.pool = pool;
        this.changes = changes;
    }

    /** A key as the API shows it; {@code value} only when just created. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Key(String id, String label, @JsonInclude(JsonInclude.Include.NON_NULL) String value, String maskValue, List<String> scopes, List<Long> scopedTeams,
                      OffsetDateTime createdAt, OffsetDateTime lastUsedAt) {
    }

    public void mount(final Router router) {
        router.get(BASE).handler(PersonalApiKeyAuth.require(READ)).handler(this::list);
        router.post(BASE).handler(PersonalApiKeyAuth.require(WRITE)).handler(this::create);
        router.delete(BASE + "/:id").handler(PersonalApiKeyAuth.require(WRITE)).handler(this::revoke);
    }

    private void list(final RoutingContext ctx) {
        pool.preparedQuery(LIST).execute(Tuple.of(PersonalApiKeyAuth.principal(ctx).userId())).map(rows -> {
            final List<Key> keys = new ArrayList<>();
            rows.forEach(row -> keys.add(key(row, null)));
            return keys;
        }).onSuccess(keys -> Responses.json(ctx, 200, keys)).onFailure(ctx::fail);
    }

    private void create(final RoutingContext ctx) {
        final Principal who = PersonalApiKeyAuth.principal(ctx);
        final Body body = Body.of(ctx);
        final String label = body.string("label", 40);
        if (label == null || label.isBlank()) {
            throw ApiError.badRequest("required", "'label' is required.", "label");
        }
        final List<String> scopes = body.has("scopes") ? body.strings("scopes") : List.of();
        if (scopes.isEmpty()) {
            throw ApiError.badRequest("required", "'scopes' must name at least one scope.", "scopes");
        }
        for (final String scope : scopes) {
            if (!valid(scope)) {
                throw ApiError.badRequest("invalid_choice", "Unknown scope '" + scope + "'.", "scopes");
            }
            if (!Scope.allows(who.scopes(), scope) || (Scope.ALL.equals(scope) && !who.scopes().contains(Scope.ALL))) {
                throw ApiError.forbidden("permission_denied", "This key cannot grant the scope '" + scope + "' it does not have.");
            }
        }
        final Long[] projects = body.has("scoped_teams") && body.raw("scoped_teams") != null && !body.raw("scoped_teams").isNull()
                ? body.integers("scoped_teams").toArray(Long[]::new) : null;
        final String secret = ApiKeys.newPersonalKey();
        pool.preparedQuery(INSERT).execute(Tuple.tuple().addString(UUID.randomUUID().toString()).addLong(who.userId())
                        .addString(label.trim()).addString(ApiKeys.hash(secret)).addString(ApiKeys.mask(secret))
                        .addArrayOfString(new LinkedHashSet<>(scopes).toArray(String[]::new)).addArrayOfLong(projects))
                .map(rows -> key(rows.iterator().next(), secret))
                .onSuccess(key -> Responses.json(ctx, 201, key))
                .onFailure(ctx::fail);
    }

    private void revoke(final RoutingContext ctx) {
        final String id = ctx.pathParam("id");
        // Keys' ids are uuids: anything else (a NUL byte PostgreSQL would refuse, a path fragment) names no key.
        if (!isUuid(id)) {
            ctx.fail(ApiError.notFound("Not found."));
            return;
        }
        pool.preparedQuery(REVOKE).execute(Tuple.of(id, PersonalApiKeyAuth.principal(ctx).userId()))
                .compose(rows -> rows.rowCount() > 0 ? Future.<Void>succeededFuture() : Future.failedFuture(ApiError.notFound("Not found.")))
                .onSuccess(v -> {
                    changes.changedHere();
                    ctx.response().setStatusCode(204).end();
                })
                .onFailure(ctx::fail);
    }

    private static boolean isUuid(final String id) {
        if (id == null || id.length() != 36) {
            return false;
        }
        try {
            return UUID.fromString(id).toString().equals(id);
        } catch (final IllegalArgumentException e) {
            return false;
        }
    }

    static boolean valid(final String scope) {
        if (Scope.ALL.equals(scope)) {
            return true;
        }
        final int colon = scope.indexOf(':');
        return colon > 0 && OBJECTS.contains(scope.substring(0, colon))
                && ("read".equals(scope.substring(colon + 1)) || "write".equals(scope.substring(colon + 1)));
    }

    private static Key key(final Row row, final String secret) {
        final Long[] projects = row.getArrayOfLongs("scoped_projects");
        return new Key(row.getString("id"), row.getString("label"), secret, row.getString("mask_value"),
                List.of(row.getArrayOfStrings("scopes")), projects == null ? null : Arrays.asList(projects),
                row.getOffsetDateTime("created_at"), row.getOffsetDateTime("last_used_at"));
    }
}
