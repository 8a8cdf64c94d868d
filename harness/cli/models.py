"""`harness models`: the kinds of model string a run accepts; `--check` asks an OpenAI-compatible endpoint
whether it answers and whether it returns native tool calls."""

from __future__ import annotations

import typer

from harness.cli.app import MORE_THAN_ZERO, Table, app, console
from harness.defaults import DEFAULT_ENDPOINT_CHECK_TIMEOUT_S
from harness.errors import UserError


@app.command()
def models(
    check: bool = typer.Option(False, "--check", help="ask the --api-base endpoint whether it answers and whether "
                                                      "it returns native tool calls (exit code 2 if it does not answer)"),
    model: str = typer.Option(None, "--model", envvar="HARNESS_MODEL", help="the model string a run would use"),
    api_base: str = typer.Option(None, "--api-base", envvar="HARNESS_API_BASE",
                                 help="base URL of an OpenAI-compatible server (vLLM, llama.cpp, LM Studio)"),
    timeout: float = typer.Option(DEFAULT_ENDPOINT_CHECK_TIMEOUT_S, "--timeout", **MORE_THAN_ZERO,
                                  help="limit (s) on each check request"),
) -> None:
    """List the kinds of model a run accepts; with --check, probe an OpenAI-compatible endpoint with two short
    requests (a plain one, and one offering a trivial tool)."""
    from harness.models import check_model
    from harness.models.families import model_families

    if not check:
        table = Table("family", "model strings", "default scaffold", "needs")
        for family in model_families():
            table.add_row(family.name, family.strings or " | ".join(family.keys), family.default_scaffold,
                          family.needs)
        console().print(table)
        return
    if not api_base or not model:
        raise UserError("--check needs --model openai/NAME and --api-base URL (the endpoint to ask)")
    check_model(model, api_base=api_base)
    from harness.models.endpoint import check_endpoint, verdict_line

    found = check_endpoint(model, api_base, timeout_s=timeout)
    out = console()
    out.print(f"endpoint {found.url}: answers ({found.model} replied {found.reply!r})", soft_wrap=True)
    out.print(verdict_line(found.tool_calls), soft_wrap=True)
    out.print(f"tool request returned: {found.tool_reply}", soft_wrap=True, markup=False)
