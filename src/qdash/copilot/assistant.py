"""The calibration assistant: chat and analysis turns on top of the generic engine.

This is the facade the API and ``qdash ask`` call. It joins what only the calibration layer knows
(prompts, task knowledge, the caller's project-scoped tools, the analysis context and figures) with
the engine, and keeps the dashboard's status sequence (docs/api.md). It holds no
conversation state: history arrives with the request, the data store lives in MongoDB, so any
replica can serve any turn.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

from pymongo.database import Database

from qdash.actions.decisions import Pending
from qdash.copilot.analysis_context import FigureLoader, files_under, gather_analysis_inputs
from qdash.copilot.answer import DASHBOARD_ANSWER, DASHBOARD_STATUS
from qdash.copilot.demo_model import DemoModel
from qdash.copilot.engine_config import model_registry, run_limits
from qdash.copilot.history import condense_history
from qdash.copilot.prompts import (
    ANALYSIS_PROMPT,
    build_chat_instructions,
    chat_context_note,
    images_note,
    load_task_knowledge,
    render_analysis_context,
)
from qdash.copilot.references import ReferenceLoader, knowledge_references
from qdash.copilot.requests import AnalyzeRequest, ChatRequest, HistoryEntry, ModelOverride
from qdash.copilot.run_modes import RUN_TEXTS, RunTexts
from qdash.copilot.service import CopilotDataService
from qdash.copilot.tools.actions import ApprovedStep, carry_out_decision
from qdash.copilot.tools.output import output_data
from qdash.copilot.tools.spec import SandboxReply, SandboxRunner, ToolContext
from qdash.engine.agent import Agent
from qdash.engine.events import Event, Failed, Final, Status
from qdash.engine.items import AssistantMessage, FunctionCall, FunctionCallOutput, Item, UserMessage
from qdash.engine.providers.base import Model, ModelError
from qdash.engine.providers.factory import ModelConfig, ModelRegistry
from qdash.engine.tool import Tool
from qdash.models.answer import Answer, ImagesSent
from qdash.settings import Settings
from qdash.uploads import UploadStore


class Scope(Protocol):
    """Who is asking and in which project (the API's ``Principal`` has this shape)."""

    @property
    def project_id(self) -> str: ...

    @property
    def username(self) -> str: ...


class UnknownModelError(ValueError):
    """``model_override`` named no configured model; the message lists the configured aliases."""


def resolve_model_alias(settings: Settings, override: ModelOverride | None) -> str:
    """The configured alias a request asks for (default model when none)."""
    models = settings.copilot.models
    if override is None or (override.alias is None and override.name is None):
        return settings.copilot.default_model
    if override.alias is not None and override.alias in models:
        return override.alias
    if override.alias is None:
        matches = [
            alias
            for alias, config in models.items()
            if config.name == override.name and override.provider in (None, config.provider)
        ]
        # The upstream dashboard names a model by provider and name only; when several aliases
        # share them (a lab's own entry and the built-in catalogue's), the configured default wins.
        if matches:
            return settings.copilot.default_model if settings.copilot.default_model in matches else matches[0]
    asked = override.alias if override.alias is not None else override.name
    raise UnknownModelError(f"Unknown model '{asked}'; configured models: {', '.join(sorted(models))}")


class _ProcessSandbox:
    """The process-wide sandbox pool, started on first use (the API lifespan may start it earlier)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    async def run(self, code: str, data: dict[str, Any] | None = None) -> SandboxReply:
        from qdash.sandbox import SandboxUnavailableError, get_sandbox, start_sandbox

        try:
            pool = await start_sandbox(self._settings.sandbox)
        except SandboxUnavailableError:
            pool = get_sandbox()  # kept with its reason: the call answers "Sandbox unavailable: …"
        return await pool.run(code, data)


def default_figures(db: Database[dict[str, Any]], settings: Settings) -> FigureLoader:
    """Figures under the data dir or a ``lab.figure_roots`` directory; on the embedded demo lab,
    missing ones are rendered on first use."""
    from qdash.db import database_mode

    roots = settings.lab.figure_roots
    if database_mode(db) == "embedded":
        from qdash.demo.figures import ensure_figure

        return files_under(settings.database.data_dir, ensure_figure, roots)
    return files_under(settings.database.data_dir, roots=roots)


def _as_data_url(image_base64: str) -> str:
    return image_base64 if image_base64.startswith("data:") else f"data:image/png;base64,{image_base64}"


def history_items(history: Sequence[HistoryEntry], settings: Settings) -> list[Item]:
    """The UI's resent conversation, condensed, as canonical items."""
    condensed = condense_history(
        list(history),
        max_turns=settings.analysis.max_conversation_turns,
        max_chars=settings.copilot.history_max_chars,
        digest_chars=settings.copilot.history_digest_chars,
    )
    return [
        UserMessage.text(entry.content) if entry.role == "user" else AssistantMessage(entry.content)
        for entry in condensed
    ]


class Assistant:
    """Chat and analysis turns for any caller; one instance per process."""

    def __init__(
        self,
        db: Database[dict[str, Any]],
        settings: Settings,
        *,
        models: ModelRegistry | None = None,
        sandbox: SandboxRunner | None = None,
        figures: FigureLoader | None = None,
        references: ReferenceLoader | None = None,
    ) -> None:
        self.db = db
        self.settings = settings
        self.models = models or model_registry(settings, builders={"demo": self._demo_model})
        self.sandbox: SandboxRunner = sandbox or _ProcessSandbox(settings)
        self.figures = figures or default_figures(db, settings)
        self.references = references or knowledge_references(settings.config_dir, settings.database.data_dir)
        self.uploads = UploadStore(db, settings.uploads)

    def _demo_model(self, alias: str, config: ModelConfig) -> Model:
        suggestions = [suggestion.prompt for suggestion in self.settings.copilot.suggestions]
        return DemoModel(alias, config.name, suggestions)

    async def aclose(self) -> None:
        """Release the model clients' connections (the server's shutdown, the end of ``qdash ask``)."""
        await self.models.aclose()

    def _service(self, scope: Scope, session_id: str | None, model: str | None = None) -> CopilotDataService:
        return CopilotDataService(
            ToolContext(
                self.db,
                scope.project_id,
                scope.username,
                self.settings,
                session_id,
                sandbox=self.sandbox,
                uploads=self.uploads,
                model=model,
            )
        )

    def _agent(self, model: Model, instructions: str, service: CopilotDataService, step: str) -> Agent:
        """The turn's agent; chat turns can also ask the user to choose (``ask_user``, last in the
        tools array so the prefix the prompt cache sees stays the same)."""
        limits = run_limits(self.settings, local=model.capabilities.local)
        tools: list[Tool] = [*service.tools(chat=step == RUN_TEXTS["chat"].step)]
        return Agent(
            model,
            instructions=instructions,
            tools=tools,
            limits=limits,
            output_type=DASHBOARD_ANSWER,
            status_texts=DASHBOARD_STATUS,
            step=step,
        )

    def _start(
        self, scope: Scope, request: ChatRequest | AnalyzeRequest, enabled: bool, texts: RunTexts
    ) -> tuple[Model, CopilotDataService] | Failed:
        """The requested configured model and the caller's data service, or the terminal event that
        explains why the turn cannot start (copilot disabled, unknown or unusable model)."""
        if not enabled:
            return Failed("init", "Copilot is not enabled", "disabled")
        try:
            model = self.models.get(resolve_model_alias(self.settings, request.model_override))
        except UnknownModelError as exc:
            return Failed(texts.step, texts.failed_detail(exc), "model_error")
        except ModelError as exc:
            return Failed(texts.step, texts.failed_detail(exc.detail), exc.kind)
        return model, self._service(scope, request.session_id, model.name)

    async def chat(
        self, scope: Scope, request: ChatRequest, decision: Pending | None = None
    ) -> AsyncIterator[Event]:
        """One chat turn: status events, the engine's events, then exactly one Final or Failed.

        ``decision``: the user's decision on a proposed lab action, checked by the request
        (``qdash.actions.decisions.bind``). The turn carries it out: an approval as its first step,
        the call the model proposed run by the engine (``ApprovedStep``) and reported like any
        call; a decline claimed here and told to the model as that call's output. No user message
        can forge either."""
        yield Status("load_config", "Loading configuration...")
        texts = RUN_TEXTS["chat"]
        started = self._start(scope, request, self.settings.copilot.enabled, texts)
        if isinstance(started, Failed):
            yield started
            return
        model, service = started
        note = ""
        if request.chip_id:
            qubit_params: dict[str, Any] | None = None
            if request.qid:
                yield Status("load_qubit_params", "Fetching qubit parameters...")
                qubit_params = await self._preload_qubit(service, request.chip_id, request.qid)
            note = chat_context_note(request.chip_id, request.qid, qubit_params)
        message = request.message
        ran: list[Item] = []
        first: list[tuple[FunctionCall, Tool]] = []
        if decision is not None:
            message, call = decision.user_text(), _proposed_call(decision)
            if decision.approve:
                first = [(call, ApprovedStep(decision))]
            else:
                declined = await carry_out_decision(service.context, decision)
                ran = [call, FunctionCallOutput(call.call_id, declined.model_text)]
        images = [_as_data_url(request.image_base64)] if request.image_base64 else []
        text = f"{note}\n\n{message}" if note else message
        agent = self._agent(model, build_chat_instructions(self.settings), service, texts.step)
        yield Status(texts.step, texts.running)
        message_in = UserMessage.text(text, images)
        run = self._run(agent, service, message_in, request.conversation_history, texts, ran=ran, first=first)
        async for event in run:
            yield event

    async def analyze(self, scope: Scope, request: AnalyzeRequest) -> AsyncIterator[Event]:
        """One analysis turn on one task result; the Final's answer carries ``images_sent``."""
        yield Status("build_context", "Building analysis context...")
        enabled = self.settings.copilot.enabled and self.settings.analysis.enabled
        texts = RUN_TEXTS["analysis"]
        started = self._start(scope, request, enabled, texts)
        if isinstance(started, Failed):
            yield started
            return
        model, service = started
        multimodal = (
            self.settings.analysis.multimodal
            and self.settings.copilot.models[
                resolve_model_alias(self.settings, request.model_override)
            ].multimodal
        )
        inputs = await gather_analysis_inputs(
            service,
            request,
            self.figures if multimodal else None,
            self.settings.analysis.max_image_bytes,
            self.references if multimodal else None,
        )
        if inputs.not_found:
            yield Failed(texts.step, texts.failed_detail(inputs.not_found), "internal")
            return
        images = [_as_data_url(b64) for b64 in inputs.figure_images]
        if request.image_base64 and multimodal:
            images.append(_as_data_url(request.image_base64))
        experiment_figures = len(images)
        images += [_as_data_url(b64) for b64 in inputs.reference_images]
        yield Status("load_images", _images_message(len(inputs.figure_images), len(inputs.references)))
        knowledge = load_task_knowledge(self.settings.config_dir).get(request.task_name)
        instructions = ANALYSIS_PROMPT.instructions(self.settings, request.task_name, knowledge, bool(images))
        note = images_note(request.task_name, experiment_figures, [ref.alt_text for ref in inputs.references])
        parts = (render_analysis_context(inputs.context), note, f"Question: {request.message}")
        text = "\n\n".join(part for part in parts if part)
        agent = self._agent(model, instructions, service, texts.step)
        yield Status(texts.step, texts.running)
        run = self._run(
            agent,
            service,
            UserMessage.text(text, images),
            request.conversation_history,
            texts,
            images_sent=inputs.images_sent(request.task_name),
        )
        async for event in run:
            yield event

    async def _preload_qubit(
        self, service: CopilotDataService, chip_id: str, qid: str
    ) -> dict[str, Any] | None:
        """Current parameters through the same tool the model would call (compact, scoped)."""
        output = await service.call("get_qubit_params", {"chip_id": chip_id, "qid": qid})
        return None if output.is_error else output_data(output).shown

    async def _run(
        self,
        agent: Agent,
        service: CopilotDataService,
        message: UserMessage,
        history: Sequence[HistoryEntry],
        texts: RunTexts,
        *,
        images_sent: ImagesSent | None = None,
        ran: Sequence[Item] = (),
        first: Sequence[tuple[FunctionCall, Tool]] = (),
    ) -> AsyncIterator[Event]:
        """The engine's events, with the dashboard's failure prefix and the ``complete`` status; the
        ``Final`` carries the typed answer (``images_sent`` set on analysis turns)."""
        history_in = history_items(history, self.settings)
        stream = agent.run_stream(message, history=history_in, ran=ran, first=first, deps=service.new_turn())
        try:
            async for event in stream:
                if isinstance(event, Failed):
                    yield Failed(event.step, texts.failed_detail(event.detail), event.code)
                    return
                if isinstance(event, Final):
                    yield Status("complete", texts.done)
                    answer: Answer = event.result
                    if images_sent is not None:
                        answer = answer.model_copy(update={"images_sent": images_sent})
                    yield Final(answer, event.stop_reason, event.meta)
                    return
                yield event
        finally:
            await aclose(stream)


async def aclose(stream: AsyncIterator[Event]) -> None:
    """Close an async generator early, so the engine cancels the model request and running tools."""
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()


def _proposed_call(decision: Pending) -> FunctionCall:
    """The call the model proposed, as the decision's turn makes it again (its id marks it as the
    server's: ``qdash.actions.decisions.is_decision_call``)."""
    arguments = json.dumps(decision.approval["args"], ensure_ascii=False)
    return FunctionCall(decision.call_id, str(decision.approval["tool"]), arguments)


def _images_message(figures: int, references: int) -> str:
    if figures and references:
        return f"Sending experiment figure and {references} reference images to AI..."
    if figures:
        return "Sending experiment figure to AI..."
    if references:
        return f"Sending {references} reference images to AI..."
    return "No figure available; analyzing the numbers..."
