package dev.eddy.gateway.sharing;

import dev.eddy.gateway.dashboards.Dashboard;
import dev.eddy.gateway.dashboards.DashboardRepository;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.insights.Insight;
import dev.eddy.gateway.insights.InsightRepository;
import io.vertx.core.Future;

/**
 * What a public link ({@code /shared/:access_token}) opens, for every route that serves one (the JSON, the page, the
 * live stream): its sharing while enabled, and the dashboard or insight it shares while not deleted; anything else is
 * a 404, whatever the reason, so a link tells nothing about what it no longer shares.
 */
public final class SharedLinks {
    /** The public reader has no user: it gets the view privilege. */
    private static final long ANONYMOUS = 0;
    /** Tokens are 43 characters; anything much longer is not one. */
    private static final int MAX_TOKEN = 100;
    /** The alphabet of the tokens Eddy makes (URL-safe base64). */
    private static final java.util.regex.Pattern TOKEN = java.util.regex.Pattern.compile("[A-Za-z0-9_-]+");

    private final SharingRepository sharing;
    private final DashboardRepository dashboards;
    private final InsightRepository insights;

    public SharedLinks(final SharingRepository sharing, final DashboardRepository dashboards, final InsightRepository insights) {
        this.sharing = sharing;
        this.dashboards = dashboards;
        this.insights = insights;
    }

    /**
     * An opened link: exactly one of {@code dashboard} and {@code insight}.
     *
     * @param sharing its sharing configuration (enabled)
     */
    public record Opened(SharingRepository.Sharing sharing, Dashboard dashboard, Insight insight) {
    }

    /** The link's shared object, or a failed future with a 404. */
    public Future<Opened> open(final String token) {
        // Tokens are URL-safe base64: anything else (a NUL byte PostgreSQL would refuse, a path fragment) opens nothing.
        if (token == null || token.isEmpty() || token.length() > MAX_TOKEN || !TOKEN.matcher(token).matches()) {
            return Future.failedFuture(ApiError.notFound("Not found."));
        }
        return sharing.enabledByToken(token).compose(ApiError::orNotFound).compose(s -> s.dashboardId() != null
                ? dashboards.find(s.projectId(), ANONYMOUS, s.dashboardId()).map(found -> found.filter(d -> !d.deleted()))
                        .compose(ApiError::orNotFound).map(d -> new Opened(s, d, null))
                : insights.find(s.projectId(), s.insightId()).map(found -> found.filter(i -> !i.deleted()))
                        .compose(ApiError::orNotFound).map(i -> new Opened(s, null, i)));
    }

    /** The link's shared dashboard, or a failed future with a 404 (for an insight too). */
    public Future<Opened> openDashboard(final String token) {
        return open(token).compose(o -> o.dashboard() != null ? Future.succeededFuture(o) : Future.failedFuture(ApiError.notFound("Not found.")));
    }
}
