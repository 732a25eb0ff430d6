"""The words task_intent reads, in English, Spanish, French, German and Portuguese.

Each entry is a regular-expression alternation (matched case-insensitively, whole words);
`KNOWN_WORDS` are content words of these languages that tell a task is written in one of them
(a task in another language is read by the model when one is configured).
"""

from __future__ import annotations

import re

NUMBER_WORDS: dict[str, int] = {
    # English
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "hundred": 100,
    # Spanish ("uno", "una" are also articles: left out)
    "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8,
    "nueve": 9, "diez": 10, "doce": 12, "quince": 15, "veinte": 20, "treinta": 30,
    "cuarenta": 40, "cincuenta": 50, "cien": 100,
    # French
    "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "sept": 7, "huit": 8, "neuf": 9, "dix": 10,
    "douze": 12, "quinze": 15, "vingt": 20, "trente": 30, "quarante": 40, "cinquante": 50,
    "cent": 100,
    # German
    "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9,
    "zehn": 10, "zwölf": 12, "fünfzehn": 15, "zwanzig": 20, "dreißig": 30, "vierzig": 40,
    "fünfzig": 50, "hundert": 100,
    # Portuguese
    "duas": 2, "três": 3, "sete": 7, "oito": 8, "nove": 9, "dez": 10, "doze": 12, "vinte": 20,
    "trinta": 30, "quarenta": 40, "cinquenta": 50, "cem": 100,
}  # fmt: skip

NOUNS = (
    r"items?|products?|results?|listings?|entries|entry|records?|rows?|articles?|posts?|jobs?"
    r"|offers?|deals?|cards?|links?|pages?|things?|ones"
    r"|productos?|art[íi]culos?|elementos?|resultados?|entradas?|registros?|anuncios?|ofertas?"
    r"|fichas?|libros?"
    r"|produits?|[ée]l[ée]ments?|r[ée]sultats?|annonces?|offres?|entr[ée]es?|fiches?|livres?"
    r"|produkte?|artikeln?|eintr[äa]ge|eintrag|ergebnisse?|angebote?|elemente?|b[üu]cher"
    r"|datens[äa]tze|anzeigen"
    r"|produtos?|itens|artigos?|an[úu]ncios?|livros?"
)
"""What a task counts: the nouns a count goes with ("20 items", "12 productos")."""

VERBS = (
    r"extract|get|scrape|collect|fetch|grab|return|take|pull|list|show|find"
    r"|extrae|extraer|extraiga|obt[ée]n|obtener|saca|sacar|dame|recoge|recopila|lista|muestra"
    r"|busca|trae"
    r"|extrais|extraire|extrayez|r[ée]cup[èe]re|r[ée]cup[ée]rer|r[ée]cup[ée]rez|donne-moi"
    r"|liste|listez|collecte|affiche"
    r"|extrahiere|extrahieren|extrahier|hole|holen|gib|sammle|sammeln|liste|zeige|finde"
    r"|extraia|extrair|extraia|obtenha|obter|pegue|pega|colete|coletar|mostre|liste|traga"
)
"""Verbs a count may follow ("extract 20", "extrae 12")."""

FIRST = (
    r"first|top|up to|at most|max(?:imum)?(?: of)?|only|no more than"
    r"|primer[oa]s|hasta|como m[áa]ximo|m[áa]ximo|solo|s[óo]lo"
    r"|premi[eè]re?s|jusqu'[àa]|au plus|maximum|seulement"
    r"|ersten|bis zu|h[öo]chstens|maximal|nur"
    r"|primeir[oa]s|at[ée]|no m[áa]ximo|apenas|s[óo]"
)
"""Words a count may follow ("first 20", "los primeros 12", "bis zu 30")."""

ARTICLES = r"the|los|las|el|la|les|le|des|die|der|das|den|os|as|o|a"

SEARCH = (
    r"search(?:ing)?(?:\s+for)?|look(?:ing)?\s+for|query(?:ing)?(?:\s+for)?"
    r"|matching|that\s+match|which\s+match|match(?:es)?|containing|that\s+contain"
    r"|which\s+contain|contains?|mentioning|that\s+mention|with\s+the\s+(?:word|term|keyword)"
    r"|keyword|for\s+the\s+term"
    r"|buscando|busca(?:r)?(?!\s+\d)|que\s+contengan?|que\s+incluyan?|con\s+la\s+palabra"
    r"|contenant|qui\s+contiennent|rechercher|recherche|avec\s+le\s+mot"
    r"|suche(?:n)?(?:\s+nach)?|die\s+\S+\s+enthalten|mit\s+dem\s+wort|enthalten"
    r"|pesquisar|pesquisa|que\s+contenham|contendo|com\s+a\s+palavra"
)
"""Words that introduce a search term ("matching 'oak'", "que contengan 'roble'")."""

TERM_STOP = (
    r"and|then|sorted|sort|ordered|order|in|within|from|on|under|over|with|by|starting|cheapest"
    r"|newest|oldest|latest|highest|lowest|best|top|most|least"
    r"|y|e|ordenad[oa]s|ordenar|en|de|del|con|por|m[áa]s"
    r"|et|tri[ée]e?s|class[ée]e?s|dans|avec|par|les"
    r"|und|sortiert|nach|mit|aus|im"
    r"|ordenad[oa]s|em|na|no|da|do|com|mais"
)
"""Words that end a bare search term ("search for lamp sorted by price" -> "lamp")."""

SORTED = (
    r"sort(?:ed|ing)?|order(?:ed|ing)?|rank(?:ed|ing)?"
    r"|ordenad[oa]s?|ordena(?:r|dos)?|clasificad[oa]s?"
    r"|tri[ée]e?s?|trier|class[ée]e?s?"
    r"|sortiert|sortieren|sortiere|geordnet"
    r"|ordenad[oa]s?|ordene"
)
BY = r"by|on|por|par|nach"

SORT_FIELDS = (
    (r"price|cost|precio|coste|costo|prix|tarif|preis|kosten|pre[çc]o|valor", "price", False),
    (
        r"rating|ratings|stars|reviews|score|popularity|valoraci[óo]n|puntuaci[óo]n"
        r"|calificaci[óo]n|estrellas|note|notes|[ée]valuation|avis|bewertung|bewertungen"
        r"|sterne|avalia[çc][ãa]o|classifica[çc][ãa]o|estrelas|nota",
        "rating",
        True,
    ),
    (
        r"date|recency|age|time|listing date|date added|fecha|antig[üu]edad|datum|alter"
        r"|data|publica[çc][ãa]o|publicaci[óo]n",
        "date",
        True,
    ),
    (r"name|title|alphabet|nombre|t[íi]tulo|nom|titre|titel|nome|alfabeto", "title", False),
)
"""Field words after "sorted by", the field, and whether it sorts descending by default."""

DESCENDING = (
    r"desc(?:ending)?|decreasing|reversed?|high(?:est)?\s+(?:first|to\s+low(?:est)?)"
    r"|largest\s+first|biggest\s+first|most\s+expensive|best\s+first|newest(?:\s+first)?"
    r"|latest(?:\s+first)?|most\s+recent|z\s*(?:-|to)\s*a"
    r"|descendente|de\s+mayor\s+a\s+menor|m[áa]s\s+(?:caros?|recientes?|nuevos?)"
    r"|d[ée]croissante?|du\s+plus\s+(?:cher|grand|r[ée]cent)|plus\s+r[ée]cents?"
    r"|absteigend|von\s+hoch\s+nach\s+niedrig|neueste|h[öo]chste"
    r"|decrescente|do\s+maior\s+para\s+o\s+menor|mais\s+(?:caros?|recentes?|novos?)"
)
ASCENDING = (
    r"asc(?:ending)?|increasing|low(?:est)?\s+(?:first|to\s+high(?:est)?)"
    r"|smallest\s+first|cheapest(?:\s+first)?|worst\s+first|oldest(?:\s+first)?"
    r"|earliest(?:\s+first)?|a\s*(?:-|to)\s*z"
    r"|ascendente|de\s+menor\s+a\s+mayor|m[áa]s\s+(?:baratos?|antiguos?)"
    r"|croissante?|du\s+moins\s+cher|moins\s+chers?|plus\s+anciens?"
    r"|aufsteigend|von\s+niedrig\s+nach\s+hoch|g[üu]nstigste|billigste|[äa]lteste"
    r"|crescente|do\s+menor\s+para\s+o\s+maior|mais\s+(?:baratos?|antigos?)"
)

SORT_PHRASES: tuple[tuple[str, str], ...] = (
    (r"\b(?:cheapest|least expensive|lowest[- ]priced?|lowest price|"
     r"price\s*:?\s*low(?:est)? to high(?:est)?|m[áa]s\s+baratos?|precio\s+m[áa]s\s+bajo"
     r"|moins\s+chers?|prix\s+croissant|g[üu]nstigste|billigste|preis\s+aufsteigend"
     r"|mais\s+baratos?|menor\s+pre[çc]o)", "price_asc"),
    (r"\b(?:most expensive|priciest|highest[- ]priced?|highest price|"
     r"price\s*:?\s*high(?:est)? to low(?:est)?|m[áa]s\s+caros?|plus\s+chers?|teuerste"
     r"|mais\s+caros?|maior\s+pre[çc]o)", "price_desc"),
    (r"\b(?:lowest[- ]rated|worst[- ]rated|worst reviewed|least popular)", "rating_asc"),
    (r"\b(?:top[- ]rated|best[- ]rated|highest[- ]rated|best[- ]reviewed|most popular"
     r"|best (?:ones|products|items)|mejor\s+valorad[oa]s|mieux\s+not[ée]e?s"
     r"|am\s+besten\s+bewertet\w*|beste\s+bewertung|mais\s+bem\s+avaliad[oa]s"
     r"|melhor\s+avaliad[oa]s)", "rating_desc"),
    (r"\b(?:oldest|earliest|least recent|chronological|m[áa]s\s+antiguos?|plus\s+anciens?"
     r"|[äa]lteste|mais\s+antigos?)", "date_asc"),
    (r"\b(?:newest|latest|most recent|recently (?:added|listed)|newer first"
     r"|m[áa]s\s+recientes?|m[áa]s\s+nuevos?|plus\s+r[ée]cents?|neueste|mais\s+recentes?"
     r"|mais\s+novos?)", "date_desc"),
    (r"(?:\bz\s*(?:-|to|→|a|à|bis)\s*a\b|reverse alphabetical)", "title_desc"),
    (r"(?:\ba\s*(?:-|to|→|a|à|bis)\s*z\b|alphabetical(?:ly)?|alfab[ée]ticamente"
     r"|par\s+ordre\s+alphab[ée]tique|alphabetisch|(?:de|da)\s+a\s+(?:a|à)\s+z)", "title_asc"),
)  # fmt: skip
"""Phrases that say an order without "sorted by" ("cheapest first", "más baratos")."""

CATEGORY = r"categor(?:y|ies)|categor[íi]as?|cat[ée]gories?|kategorien?"
IN = r"in|from|within|under|de|en|dentro\s+de|dans|aus|da|na|em|no"
ONLY = (
    r"only|just|solo|s[óo]lo|solamente|[úu]nicamente|seulement|uniquement|nur|ausschlie[ßs]lich"
    r"|apenas|somente"
)
"""Words before a filter value ("only Garden tools", "solo Cocina")."""

STOP_WORDS = {
    "a", "an", "the", "all", "first", "top", "last", "next", "more", "of", "these", "those",
    "new", "newest", "latest", "oldest", "recent", "cheapest", "cheap", "expensive", "best",
    "worst", "rated", "top-rated", "most", "least", "visible", "listed", "available",
    "following", "remaining", "some", "many", "any", "other", "different", "unique", "such",
    "product", "item", "listing", "job", "result", "page", "list", "data", "detail", "details",
    "record", "entry", "search", "shop", "store", "catalog", "catalogue", "individual", "only",
    "up", "to", "at", "max", "maximum", "about", "around", "roughly", "approximately", "my",
    "our", "your", "their", "its", "this", "that", "from", "in", "on", "with", "and", "or",
    "for", "by", "per", "each", "every", "single", "popular", "highest", "lowest", "matching",
    # Spanish, French, German, Portuguese
    "los", "las", "el", "la", "lo", "del", "de", "en", "y", "o", "con", "por", "para", "todos",
    "todas", "primeros", "primeras", "esta", "este", "página", "tienda", "lista", "catálogo",
    "les", "le", "des", "du", "et", "ou", "dans", "avec", "pour", "tous", "toutes", "premiers",
    "premières", "cette", "ce", "boutique", "liste", "die", "der", "das", "den", "dem", "und",
    "oder", "mit", "für", "alle", "ersten", "diese", "dieser", "seite", "katalog", "os", "as",
    "do", "da", "dos", "e", "com", "primeiros", "primeiras", "loja", "apenas", "só", "solo",
    "sólo", "nur", "seulement", "uniquement",
}  # fmt: skip
"""Words that are never a filter value on their own."""

KNOWN_WORDS = re.compile(
    rf"\b(?:{VERBS}|{NOUNS}|{SORTED}|{CATEGORY}|{ONLY}|{FIRST}|{SEARCH})\b", re.IGNORECASE
)
"""Any of these in a task says it is written in a language the patterns read."""
