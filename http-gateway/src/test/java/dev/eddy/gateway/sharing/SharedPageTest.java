package dev.eddy.gateway.sharing;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Who gets the shared dashboard's page and who its JSON, by the request's {@code Accept} header. */
class SharedPageTest {

    @ParameterizedTest(name = "{0} -> html {1}")
    @CsvSource(delimiter = '|', nullValues = "NULL", value = {
            // Browsers navigating to the link.
            "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8|true",
            "text/html|true",
            "TEXT/HTML; charset=utf-8|true",
            // API clients, as before the page existed: none, anything, JSON.
            "NULL|false",
            "''|false",
            "*/*|false",
            "application/json|false",
            "application/json, text/plain, */*|false",
            // Both named: the higher quality wins; a tie goes to the page.
            "application/json;q=0.9, text/html|true",
            "text/html;q=0.5, application/json|false",
            "text/html, application/json|true",
            "text/html;q=0|false",
            "text/html;q=oops|false"})
    void theHeaderDecides(final String accept, final boolean html) {
        assertThat(SharedPage.prefersHtml(accept)).isEqualTo(html);
    }
}
