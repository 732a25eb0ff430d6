"""Labelled task pairs for the semantic cache: (task A, task B, same task?).

Realistic tasks a task executor gets, each either said again in other words (reordered,
synonyms, fillers, punctuation, case, number formats) or turned into a near-miss that must not
share cached code (one number, comparison word, negation, field name, unit or currency, target
key, sort order, or swapped roles). Used by tests/unit/test_task_similarity.py and
benchmarks/task_similarity.py.
"""

PAIRS: list[tuple[str, str, bool]] = [
    # Discounts and prices
    ("Apply a 10 % discount above 1000", "apply a 10% discount above 1,000.", True),
    ("10 % discount above 1000", "10 % discount below 1000", False),
    (
        "Apply a 10 percent discount to orders over 1000",
        "apply a 10% discount to orders above 1000",
        True,
    ),
    ("Apply a 10% discount to orders over 1000", "Apply a 15% discount to orders over 1000", False),
    (
        "Apply a 10% discount to orders over 1000",
        "Apply a 10% discount to orders over 1000 EUR",
        False,
    ),
    (
        "Apply a 10% discount to orders over €1000",
        "Apply a 10% discount to orders over $1000",
        False,
    ),
    (
        "Please apply a 10% discount to orders over EUR 1000",
        "apply a 10 % discount to orders over 1000 €",
        True,
    ),
    (
        "Apply a 10% discount to orders of at least 1000",
        "Apply a 10% discount to orders of at most 1000",
        False,
    ),
    (
        "Apply a 10% discount to orders over 1000",
        "Apply a 10% discount to orders of at least 1000",
        False,
    ),
    ("Add 21% VAT to every price", "add 21 % VAT to each price", True),
    ("Add 21% VAT to every price", "Remove 21% VAT from every price", False),
    ("Increase all prices by 5 %", "Decrease all prices by 5 %", False),
    ("Calculate the total price including VAT", "Compute the total price including VAT", True),
    ("Calculate the total price including VAT", "Calculate the total price excluding VAT", False),
    ("Convert the prices from USD to EUR", "Convert the prices from EUR to USD", False),
    ("Convert the prices from USD to EUR", "convert the prices to EUR from USD", True),
    ("Round every price to 2 decimals", "Please round each price to 2 decimals.", True),
    ("Round every price to 2 decimals", "Round every price to 3 decimals", False),
    # Extraction from PDFs, CSV and JSON
    ("Extract the invoice total from the PDF", "From the PDF, extract the invoice total", True),
    (
        "Extract the invoice total from the PDF",
        "Please extract the invoice total from the PDF.",
        True,
    ),
    ("Extract the invoice total from the PDF", "Extract the invoice date from the PDF", False),
    ("Extract the invoice total from the PDF", "Get the invoice total from the PDF", True),
    ("Extract the invoice total from the PDF", "Extract the invoice total from the CSV", False),
    (
        "Extract the invoice total from the PDF and store it in context['total']",
        "extract the invoice total from the pdf and save it in context['total']",
        True,
    ),
    (
        "Extract the invoice total from the PDF and store it in context['total']",
        "Extract the invoice total from the PDF and store it in context['amount']",
        False,
    ),
    ("Read the CSV and count the rows", "read the csv and count the rows!", True),
    (
        "Count the rows of the CSV where status is 'paid'",
        "Count the rows of the CSV where status is 'unpaid'",
        False,
    ),
    (
        "Count the rows of the CSV where status is 'paid'",
        'count the rows of the CSV where status is "paid"',
        True,
    ),
    (
        "Count the rows of the CSV where status is 'paid'",
        "Count the rows of the CSV where status is not 'paid'",
        False,
    ),
    (
        "Parse the JSON in context['raw'] into a dict",
        "Parse the JSON in context['payload'] into a dict",
        False,
    ),
    ("Sum the amount column of the CSV", "Sum the amount_eur column of the CSV", False),
    ("Sum the amount column of the CSV", "Please sum up the amount column of the CSV", True),
    (
        "Extract all email addresses from the text",
        "Extract every e-mail address from the text",
        True,
    ),
    (
        "Extract all email addresses from the text",
        "Kindly extract the email addresses from the text",
        True,
    ),
    ("Extract the first 10 lines of the file", "Extract the last 10 lines of the file", False),
    ("Extract the first 10 lines of the file", "extract the first ten lines of the file", True),
    ("Extract the first 10 lines of the file", "Extract the first 100 lines of the file", False),
    ("Extract the table on page 2 of the PDF", "Extract the table on page 3 of the PDF", False),
    # Email
    (
        "Send the weekly report from alice@example.com to bob@example.com",
        "Send the weekly report from bob@example.com to alice@example.com",
        False,
    ),
    (
        "Send the weekly report from alice@example.com to bob@example.com",
        "Send the weekly report to bob@example.com from alice@example.com",
        True,
    ),
    (
        "Extract the sender and subject of the email",
        "Extract the sender and the subject of the email.",
        True,
    ),
    (
        "Extract the sender and subject of the email",
        "Extract the recipient and subject of the email",
        False,
    ),
    ("List emails with attachments", "List emails without attachments", False),
    ("Keep only the emails that are not spam", "Keep only the emails that are spam", False),
    # Dates
    ("Keep the orders placed before 2024-01-01", "Keep the orders placed after 2024-01-01", False),
    ("Keep the orders placed before 2024-01-01", "keep the orders placed before 2024-01-01.", True),
    ("Keep the orders placed before 2024-01-01", "Keep the orders placed before 2023-01-01", False),
    (
        "Compute the number of days between start_date and end_date",
        "Calculate the number of days between start_date and end_date",
        True,
    ),
    (
        "Compute the number of days between start_date and end_date",
        "Compute the number of hours between start_date and end_date",
        False,
    ),
    ("Format the date as DD/MM/YYYY", "Format the date as MM/DD/YYYY", False),
    # Text cleaning
    ("Strip whitespace from every line", "Remove whitespace from each line", True),
    ("Replace 'foo' with 'bar' in the title", "Replace 'bar' with 'foo' in the title", False),
    ("Replace 'foo' with 'bar' in the title", "In the title, replace 'foo' with 'bar'", True),
    ("Replace 'foo' with 'bar' in the title", "Replace 'Foo' with 'bar' in the title", False),
    ("Convert the names to lowercase", "Convert the names to uppercase", False),
    ("Remove duplicate rows", "Please remove the duplicate rows.", True),
    ("Remove duplicate rows", "Remove duplicate columns", False),
    # API payloads
    (
        "Build the API payload with user.id and user.email",
        "build the api payload with user.id and user.email",
        True,
    ),
    (
        "Build the API payload with user.id and user.email",
        "Build the API payload with user.id and user.name",
        False,
    ),
    (
        "Set the timeout field of the payload to 30 seconds",
        "Set the timeout field of the payload to 30 minutes",
        False,
    ),
    (
        "Set the timeout field of the payload to 30 seconds",
        "set the timeout key of the payload to 30 seconds",
        True,
    ),
    (
        "Set the retries field of the payload to 3",
        "Set the retries field of the payload to 3 unless it is set",
        False,
    ),
    # Sorting and filtering
    ("Sort the products by price descending", "Sort the products by price ascending", False),
    ("Sort the products by price descending", "Sort the products by price, highest first", True),
    (
        "Sort the products by price in descending order",
        "sort the products by price descending",
        True,
    ),
    ("Order the products by price ascending", "Sort the products by price ascending", True),
    ("Sort the products by price, then by name", "Sort the products by name, then by price", False),
    (
        "Keep the rows where price is greater than 50",
        "Keep the rows where price is more than 50",
        True,
    ),
    (
        "Keep the rows where price is greater than 50",
        "Keep the rows where price is less than 50",
        False,
    ),
    (
        "Keep the rows where price is greater than cost",
        "Keep the rows where cost is greater than price",
        False,
    ),
    ("Filter out the rows where email is empty", "Remove the rows where email is empty", True),
    (
        "Filter out the rows where email is empty",
        "Filter out the rows where email is not empty",
        False,
    ),
    ("Return the maximum price per category", "Return the minimum price per category", False),
    (
        "Return the top 5 customers by revenue",
        "Return the top 5 customers by revenue, please",
        True,
    ),
    ("Return the top 5 customers by revenue", "Return the top 5 customers by profit", False),
    ("Group the sales by region and sum them", "Group the sales by country and sum them", False),
    # Spanish
    ("Por favor, calcula el total de la factura", "calcula el total de la factura.", True),
    (
        "Calcula un descuento del 10 % para pedidos de más de 1.000",
        "Calcula un descuento del 10 % para pedidos de menos de 1.000",
        False,
    ),
    (
        "Calcula un descuento del 10 por ciento para los pedidos",
        "calcula un descuento del 10% para los pedidos",
        True,
    ),
    ("Extrae el total de la factura en PDF", "Extrae el total de la factura en CSV", False),
    ("Extrae los correos sin adjuntos", "Extrae los correos con adjuntos", False),
    # More wordings
    ("Work out the average order value", "Calculate the average order value", True),
    ("Calculate the mean order value", "Calculate the average order value", True),
    (
        "Delete the rows with a missing customer_id",
        "Drop the rows with a missing customer_id",
        True,
    ),
    (
        "Delete the rows with a missing customer_id",
        "Delete the rows with a missing order_id",
        False,
    ),
    (
        "Merge first_name and last_name into full_name",
        "Merge first_name and last_name into display_name",
        False,
    ),
    ("Convert the weight from pounds to kg", "Convert the weight from kg to pounds", False),
    ("Convert the weight from pounds to kg", "convert the weight from pounds to kilograms", True),
    ("Could you count the words in context['text']?", 'count the words in context["text"]', True),
    ("Count the words in context['text']", "Count the characters in context['text']", False),
    ("Check that every invoice has a number", "Check that no invoice has a number", False),
    ("Trim the description to 200 characters", "Trim the description to 2000 characters", False),
    ("Trim the description to 200 characters", "Truncate the description to 200 characters", True),
    ("Deduplicate the contacts by email", "Remove duplicate contacts by email", True),
    (
        "Ordena los productos por precio de mayor a menor",
        "ordena los productos por precio de menor a mayor",
        False,
    ),
    (
        "Ordena los productos por precio de mayor a menor",
        "Ordena los productos por precio, de mayor a menor.",
        True,
    ),
    # Found by probing the matcher
    ("Subtract the tax from the price", "Subtract the price from the tax", False),
    ("Sum the prices of each order", "Sum the prices of the order", False),
    (
        "Keep the rows where email is not null and phone is null",
        "Keep the rows where email is null and phone is not null",
        False,
    ),
    ("Split each line on .", "Split each line on", False),
    ("Split each line on .", "split each line on '.'", True),
    ("Sum the TotalAmount field", "Sum the totalamount field", False),
    ("Do not round the total", "Don't round the total", True),
    ("Return the 2 cheapest items", "Return the two cheapest items", True),
    ("Add VAT, then round the prices", "Round the prices, then add VAT", False),
    ("Compute the mean of x and y", "Compute the mean of x", False),
    # Found by the lead: ">=" and "<=" were read as ">" and "<" (strict and inclusive merged)
    (
        "Calculate discount (10% if total > 1000)",
        "Calculate discount (10% if total >= 1000)",
        False,
    ),
    ("Keep rows where qty < 5", "Keep rows where qty <= 5", False),
    ("Keep rows where qty > 5", "Keep rows where qty is at least 5", False),
    ("Keep rows where qty >= 5", "Keep rows where qty is at least 5", True),
    (
        "Calculate discount (10% if total > 1000)",
        "Please compute the discount (10 % if the total is above 1000)",
        True,
    ),
]
