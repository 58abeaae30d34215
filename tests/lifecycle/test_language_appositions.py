"""A parenthesis that only names the server before it belongs to that server's clause; one that
says more is an aside of its own. And Spring Boot is a kind a message can name."""

from __future__ import annotations

import pytest

from analyzer.lifecycle.language import Intent, read_message


@pytest.mark.parametrize(("text", "kinds", "ports"), [
    ("The **Backend (Spring Boot)** is now running in the background.", ("spring-boot",), ()),
    ("The router (sglang-router) is up.", ("sglang-router",), ()),
    ("vLLM (port 8001) is serving now.", ("vllm",), (8001,)),
])
def test_a_naming_parenthesis_gives_its_server_to_the_state(text: str, kinds: tuple[str, ...],
                                                              ports: tuple[int, ...]) -> None:
    (target,) = read_message(text, documents=False).targets[Intent.ready]
    assert (target.kinds, target.ports) == (kinds, ports)


def test_an_aside_in_parentheses_keeps_its_entities_to_itself() -> None:
    r = read_message("The frontend is running (or whatever port Vite picks on your machine).", documents=False)
    (target,) = r.targets[Intent.ready]
    assert target.kinds == ()


@pytest.mark.parametrize("text", ["restart the spring boot app", "restart Spring-Boot", "restart the springboot api"])
def test_spring_boot_is_a_kind(text: str) -> None:
    (target,) = read_message(text).targets[Intent.restart]
    assert target.kinds == ("spring-boot",)
